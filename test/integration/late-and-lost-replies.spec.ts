import { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockStoreError } from '../../lib/errors/lock.errors.js';
import { fencedWrite } from '../../lib/stores/redis/fenced-write.js';
import type { LockModuleOptions } from '../../lib/nest/interfaces/lock-module-options.interface.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import { reportFigures } from '../harness/figures.js';
import { lockModuleLog } from '../harness/lock-logs.js';
import { TcpDelayProxy } from '../harness/tcp-delay-proxy.js';
import { useRedisServer } from '../harness/use-redis.js';
import { errorOf, waitUntil } from '../harness/waits.js';

const redis = useRedisServer();
let proxy: TcpDelayProxy;
const engines: LockEngine[] = [];
const clients: Redis[] = [];

/** An engine whose store talks to Redis through the proxy, as `LockModule.forRoot` builds it. */
function engine(options: Partial<LockModuleOptions> = {}): LockEngine {
  const created = createLockEngine({
    redis: `redis://127.0.0.1:${proxy.port}`,
    storeTimeout: 2_000,
    ...options,
  });
  engines.push(created);
  return created;
}

/** A client through the proxy with ioredis's default options (it resends unanswered commands). */
function userClient(): Redis {
  const client = new Redis({ host: '127.0.0.1', port: proxy.port });
  clients.push(client);
  return client;
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

describe('a grant whose answer comes after its lease has ended', () => {
  /** Connected, with its scripts loaded; then each way 250 ms: an answer comes 500 ms late. */
  async function slowEngine(): Promise<LockEngine> {
    const locks = engine();
    await (await locks.acquire('warm-up', { fencing: true })).release();
    proxy.setDelay(250);
    return locks;
  }

  it.each<[string, (locks: LockEngine, key: string, ran: () => void) => Promise<unknown>]>([
    ['acquire', (locks, key) => locks.acquire(key, { ttl: 300, wait: 0 })],
    ['acquire with a wait', (locks, key) => locks.acquire(key, { ttl: 300, wait: 1_200 })],
    ['tryAcquire', (locks, key) => locks.tryAcquire(key, { ttl: 300 })],
    ['a fenced acquire', (locks, key) => locks.acquire(key, { ttl: 300, wait: 0, fencing: true })],
    [
      'autoRenew: false',
      (locks, key) => locks.acquire(key, { ttl: 300, wait: 0, autoRenew: false }),
    ],
    ['withLock', (locks, key, ran) => locks.withLock(key, ran, { ttl: 300, wait: 0 })],
  ])(
    'is never handed over (%s): it fails with LockStoreError and gives the key back',
    async (_, call) => {
      const locks = await slowEngine();
      const key = `late:${_}`;
      let ran = false;

      const error = await errorOf(() => call(locks, key, () => (ran = true)));

      expect(error).toBeInstanceOf(LockStoreError);
      // A wait that runs out may also see the store's slowness as silence: a store error too.
      expect((error as Error).message).toMatch(/later than the lease of 300 ms|has not answered/);
      expect(ran).toBe(false);
      expect(locks.heldCount).toBe(0);
      // The give-back lands one delayed trip later: the key goes well before its lease would end.
      proxy.setDelay(0);
      await waitUntil(
        'the late win to be given back',
        async () => !(await redis.probe.exists(`lock:${key}`)),
      );
    },
  );

  it('is held once answers are fast again, within the same wait', async () => {
    const locks = await slowEngine();
    const pending = locks.acquire('late:recovers', { ttl: 300, wait: 3_000 });
    await waitUntil(
      'a late win',
      async () => (await redis.probe.exists('lock:late:recovers')) === 1,
    );

    proxy.setDelay(0);
    const lock = await pending;

    expect(lock.signal.aborted).toBe(false);
    expect(await redis.probe.get('lock:late:recovers')).toBe(lock.token);
    await lock.release();
  });
});

describe('a reply lost with its connection', () => {
  it("fails an acquire with LockStoreError, never busy, and leaves no key (the module's client)", async () => {
    const locks = engine();
    await (await locks.acquire('warm-up')).release();
    proxy.loseReplyTo('lost:acquire');
    const started = performance.now();

    const error = await errorOf(() => locks.acquire('lost:acquire', { ttl: 30_000, wait: 0 }));
    const settledMs = performance.now() - started;

    expect(proxy.cuts).toBe(1);
    expect(error).toBeInstanceOf(LockStoreError);
    // The command was applied, so the key was set: it is given back once the client reconnects.
    await waitUntil(
      'the orphan to be given back',
      async () => !(await redis.probe.exists('lock:lost:acquire')),
    );
    const retried = await locks.acquire('lost:acquire', { wait: 0 });
    await retried.release();
    // The operator reads of the outage once, at ERROR, and once of its end.
    const lines = await waitUntil('the store to be logged back', () => {
      const up = lockModuleLog.lines.filter((line) => /answers again/.test(line.text));
      return up.length > 0 && lockModuleLog.lines;
    });
    expect(lines.map((line) => line.level)).toEqual(['error', 'log']);
    expect(lines[0]!.text).toMatch(/stopped answering: Lock "lost:acquire"/);
    reportFigures('lost reply, module client', {
      settledMs: Math.round(settledMs),
      outcome: (error as Error).name,
    });
    expect(settledMs).toBeLessThan(2_000);
  });

  it.each([
    ['acquire', (locks: LockEngine) => locks.acquire('lost:own', { ttl: 30_000, wait: 0 })],
    ['tryAcquire', (locks: LockEngine) => locks.tryAcquire('lost:own', { ttl: 30_000 })],
    [
      'a fenced acquire',
      (locks: LockEngine) => locks.acquire('lost:own', { wait: 0, fencing: true }),
    ],
  ])("recognises its own key when a user's client resends it (%s)", async (_, call) => {
    const locks = engine({ redis: userClient() });
    await (await locks.acquire('warm-up')).release();
    proxy.loseReplyTo('lost:own');

    const lock = await call(locks);

    expect(proxy.cuts).toBe(1);
    expect(lock).toBeDefined();
    expect(await redis.probe.get('lock:lost:own')).toBe(lock!.token);
    expect(await lock!.release()).toBe('released');
    expect(await redis.probe.exists('lock:lost:own')).toBe(0);
  });

  it('applies a fenced write once when ioredis resends it, and once when the caller retries it', async () => {
    const client = userClient();
    const locks = engine({ redis: client });
    const lock = await locks.acquire('stock:1', { fencing: true });
    const write = {
      fence: lock.fence,
      fenceKey: 'stock:1:fence',
      writes: [['INCRBY', 'stock:1', 5]],
    } as const;
    await redis.probe.set('stock:1', 100);

    proxy.loseReplyTo('stock:1:fence');
    const resent = await fencedWrite(client, { ...write, id: 'order-7' });
    const retried = await fencedWrite(client, { ...write, id: 'order-7' });

    expect(proxy.cuts).toBe(1);
    expect(resent).toEqual([105]);
    expect(retried).toEqual([105]);
    expect(await redis.probe.get('stock:1')).toBe('105');
    // Another id is another write.
    expect(await fencedWrite(client, { ...write, id: 'order-8' })).toEqual([110]);
    await lock.release();
  });
});
