import { Redis } from 'ioredis';
import { filter, firstValueFrom } from 'rxjs';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockLostError, LockStoreError } from '../../lib/errors/lock.errors.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import { TcpDelayProxy } from '../harness/tcp-delay-proxy.js';
import { useRedisServer } from '../harness/use-redis.js';
import { errorOf, waitUntil } from '../harness/waits.js';

/*
 * A lock's validity is that of the lease actually sent to Redis: `maxHold` below `ttl` sends a
 * shorter lease, and `extend(shorter)` shortens the one in Redis. Both must shorten the local
 * deadline too, or the lock is reported held (and code runs under it) after another process
 * has taken the key.
 */

const redis = useRedisServer();
let proxy: TcpDelayProxy;
const engines: LockEngine[] = [];
const clients: Redis[] = [];

function engine(port: number): LockEngine {
  const created = createLockEngine({ redis: `redis://127.0.0.1:${port}`, storeTimeout: 3_000 });
  engines.push(created);
  return created;
}

beforeEach(async () => {
  proxy = await TcpDelayProxy.start(redis.server.port);
});

afterEach(async () => {
  await Promise.all(engines.splice(0).map((created) => created.close()));
  for (const client of clients.splice(0)) client.disconnect();
  await proxy.close();
  await redis.probe.flushall();
});

/**
 * Once the engine's attempt has set `key`, takes it with a plain SET NX PX as soon as it is
 * free again, as another library's client would.
 */
async function takeOnceFree(key: string, until: Promise<unknown>): Promise<boolean> {
  let done = false;
  until.finally(() => (done = true)).catch(() => undefined);
  await waitUntil('the attempt to set the key', async () => redis.probe.exists(key), 5_000, 1);
  while (!done) {
    if ((await redis.probe.set(key, 'other-owner', 'PX', 10_000, 'NX')) === 'OK') return true;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return false;
}

describe('a grant is dated from the lease sent', () => {
  it.each([
    ['maxHold shorter than ttl', { ttl: 5_000, maxHold: 200 }],
    ['the control: ttl as short', { ttl: 200 }],
  ])(
    'an answer later than the lease is refused, never held under another owner (%s)',
    async (_, options) => {
      const locks = engine(proxy.port);
      await (await locks.acquire('warm-up')).release();
      // Replies 400 ms late: the key is set at once, and the answer comes long after its lease.
      proxy.setDelay(400, 'toClient');
      const key = `late:${options.ttl}`;

      const pending = locks.acquire(key, { ...options, wait: 0 });
      const taken = takeOnceFree(`lock:${key}`, pending);
      const error = await errorOf(() => pending);

      expect(await taken).toBe(true);
      expect(error).toBeInstanceOf(LockStoreError);
      expect((error as Error).message).toMatch(/later than the lease of 200 ms/);
      expect(locks.heldCount).toBe(0);
      expect(await redis.probe.get(`lock:${key}`)).toBe('other-owner');
    },
  );
});

describe('extend(shorter)', () => {
  it.each([true, false])(
    'shortens the local deadline with the lease in Redis (autoRenew %s)',
    async (autoRenew) => {
      const locks = engine(redis.server.port);
      const lock = await locks.acquire('short', { ttl: 30_000, autoRenew });

      await lock.extend(200);

      expect(lock.remainingTime()).toBeLessThanOrEqual(200);
      await waitUntil('the key to expire', async () => !(await redis.probe.exists('lock:short')));
      const other = await engine(redis.server.port).acquire('short', { wait: 0 });
      expect(lock.isHeld).toBe(false);
      expect(lock.remainingTime()).toBe(0);
      await waitUntil('the signal to abort', () => lock.signal.aborted);
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect(await redis.probe.get('lock:short')).toBe(other.token);
      await other.release();
    },
  );

  it('then extend(longer) lengthens it again, with the lease in Redis', async () => {
    const locks = engine(redis.server.port);
    const lock = await locks.acquire('again', { ttl: 30_000 });

    await lock.extend(200);
    await lock.extend(5_000);

    expect(lock.remainingTime()).toBeGreaterThan(4_000);
    expect(await redis.probe.pttl('lock:again')).toBeGreaterThan(4_000);
    expect(lock.isHeld).toBe(true);
    await lock.release();
  });

  it("is undone by the next renewal on an auto-renewed lock: the lease is the lock's ttl again", async () => {
    const locks = engine(redis.server.port);
    const lock = await locks.acquire('renewed', { ttl: 600 });
    await lock.extend(60_000);
    expect(await redis.probe.pttl('lock:renewed')).toBeGreaterThan(59_000);
    // The watchdog's renewal, after the extend's own 'renewed'.
    await firstValueFrom(
      locks.events$.pipe(filter((event) => event.type === 'renewed' && event.ttl === 600)),
    );

    expect(await redis.probe.pttl('lock:renewed')).toBeLessThanOrEqual(600);
    expect(lock.remainingTime()).toBeLessThanOrEqual(600);
    await lock.release();
  });

  it('never sets a lease past maxHold', async () => {
    const locks = engine(redis.server.port);
    const lock = await locks.acquire('capped', { ttl: 1_000, maxHold: 1_500 });

    await lock.extend(60_000);

    expect(lock.remainingTime()).toBeLessThanOrEqual(1_500);
    expect(await redis.probe.pttl('lock:capped')).toBeLessThanOrEqual(1_500);
    await lock.release();
  });
});
