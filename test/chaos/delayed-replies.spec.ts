import { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockBusyError, LockStoreError } from '../../lib/errors/lock.errors.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import { reportFigures } from '../harness/figures.js';
import { TcpDelayProxy } from '../harness/tcp-delay-proxy.js';
import { useRedisServer } from '../harness/use-redis.js';
import { outcome, waitUntil } from '../harness/waits.js';
import { recordEvents } from '../harness/engine-events.js';
import { CHAOS, timeoutFor } from '../harness/chaos-profile.js';
import { caughtUp } from '../harness/engine-state.js';
import { lockKeys } from '../harness/scan-keys.js';
import { NaiveLock } from '../harness/naive-lock.js';

const TTL = 300;
// A request reaches Redis soon; its reply comes back after the whole lease has ended there.
const TO_SERVER_MS = 50;
const TO_CLIENT_MS = 500;
const WAIT = 1_500;
// The direct client's lease: far longer than anything the engine waits.
const DIRECT_TTL = 10_000;

type Call = (locks: LockEngine, key: string, ran: () => void) => Promise<unknown>;

/** Every way to ask for a lock; each runs on a key of its own. */
const CASES: [name: string, call: Call][] = [
  ['acquire', (locks, key) => locks.acquire(key, { ttl: TTL, wait: 0 })],
  ['acquire, wait', (locks, key) => locks.acquire(key, { ttl: TTL, wait: WAIT })],
  ['tryAcquire', (locks, key) => locks.tryAcquire(key, { ttl: TTL })],
  ['fenced', (locks, key) => locks.acquire(key, { ttl: TTL, wait: 0, fencing: true })],
  ['fenced, wait', (locks, key) => locks.acquire(key, { ttl: TTL, wait: WAIT, fencing: true })],
  ['autoRenew off', (locks, key) => locks.acquire(key, { ttl: TTL, wait: 0, autoRenew: false })],
  ['withLock', (locks, key, ran) => locks.withLock(key, ran, { ttl: TTL, wait: 0 })],
  ['withLock, wait', (locks, key, ran) => locks.withLock(key, ran, { ttl: TTL, wait: WAIT })],
  ['two keys', (locks, key) => locks.acquire([key, `${key}:b`], { ttl: TTL, wait: 0 })],
];
const CROWD = 3;

describe('every reply delayed past the ttl (proxy: 50 ms to Redis, 500 ms back; ttl 300)', () => {
  const redis = useRedisServer();
  let proxy: TcpDelayProxy;
  let engines: LockEngine[];
  let direct: Redis;

  beforeAll(() => {
    direct = redis.connect();
  });

  beforeEach(async () => {
    proxy = await TcpDelayProxy.start(redis.server.port);
    // Three processes' engines, as LockModule builds them, each on its own proxied connection.
    engines = [0, 1, 2].map(() =>
      createLockEngine({ redis: `redis://127.0.0.1:${proxy.port}`, shutdownTimeout: 0 }),
    );
    // Connected, with every script loaded, before the replies slow down.
    for (const locks of engines) {
      await (await locks.acquire('warm-up', { fencing: true })).release();
      await (await locks.acquire(['warm-up', 'warm-up:b'])).release();
    }
  });

  afterEach(async () => {
    proxy.setDelay(0);
    await Promise.all(engines.map((locks) => locks.close()));
    await proxy.close();
    await redis.probe.flushall();
  });

  /**
   * Another process on a fast connection: once the engine's attempt has set `key`, it tries
   * `SET NX` until the engine's lease ends in Redis, and returns when it got the key.
   */
  async function takeOnceFree(key: string): Promise<number> {
    await waitUntil(`the attempt on ${key} to land`, () => redis.probe.exists(key), 3_000, 2);
    await waitUntil(
      `${key} to be free for the direct client`,
      async () => (await direct.set(key, 'direct', 'PX', DIRECT_TTL, 'NX')) === 'OK',
      3_000,
      2,
    );
    return performance.now();
  }

  /** The calls of one round, all at once: every case on its key, and a crowd on one more. */
  function startRound(round: number, ran: () => void) {
    const [locks, ...others] = engines;
    const calls = CASES.map(([name, call]) => ({
      name,
      key: `late:${round}:${name}`,
      settled: outcome(call(locks, `late:${round}:${name}`, ran)),
    }));
    const crowdKey = `late:${round}:crowd`;
    const crowd = [...Array(CROWD).fill(locks), ...others].map((engine: LockEngine, i) => ({
      name: `crowd #${i}`,
      key: crowdKey,
      settled: outcome(engine.acquire(crowdKey, { ttl: TTL, wait: WAIT })),
    }));
    return { calls, crowd, keys: [...calls.map(({ key }) => key), crowdKey] };
  }

  async function delayedRound(round: number): Promise<void> {
    const recorders = engines.map(recordEvents);
    let ran = 0;
    proxy.setDelay(TO_SERVER_MS, 'toServer');
    proxy.setDelay(TO_CLIENT_MS, 'toClient');
    const { calls, crowd, keys } = startRound(round, () => void ran++);
    const takenAt = new Map(
      await Promise.all(keys.map(async (key) => [key, await takeOnceFree(`lock:${key}`)] as const)),
    );
    const results = await Promise.all(
      [...calls, ...crowd].map(async (call) => ({ ...call, ...(await call.settled) })),
    );
    for (const recorder of recorders) recorder.stop();

    reportFigures(`delayed replies, round ${round}: [ms the rival held the key first, outcome]`, {
      ...Object.fromEntries(
        results.map(({ name, key, at, error }) => [
          name,
          [Math.round(at - takenAt.get(key)!), (error as Error | undefined)?.name],
        ]),
      ),
    });
    expect(ran).toBe(0);
    // Nothing was ever held: no lock returned, and no engine told its listeners otherwise.
    expect(recorders.flatMap((r) => r.events).filter((e) => e.type === 'acquired')).toEqual([]);
    for (const { name, key, value, error, at } of results) {
      expect({ name, value }).toEqual({ name, value: undefined });
      // A lone caller's only wins came late; a queued one may instead have met the rival.
      const expected = name.startsWith('crowd')
        ? [LockStoreError, LockBusyError]
        : [LockStoreError];
      expect(expected.some((type) => error instanceof type)).toBe(true);
      // By the time the engine could have reported the lock, another process held it.
      expect(takenAt.get(key)!).toBeLessThan(at);
    }
    // The crowd's first SET NX to land won the key in Redis, and its grant came back late.
    expect(
      results.some(
        ({ name, error }) => name.startsWith('crowd') && error instanceof LockStoreError,
      ),
    ).toBe(true);
    await afterDelays(keys);
  }

  /** Fast again: the give-backs left the rival's keys alone, and each key is free once it goes. */
  async function afterDelays(keys: readonly string[]): Promise<void> {
    proxy.setDelay(0);
    for (const locks of engines) await caughtUp(locks);
    for (const key of keys) expect(await redis.probe.get(`lock:${key}`)).toBe('direct');
    expect(engines.map((locks) => locks.heldCount)).toEqual([0, 0, 0]);
    await redis.probe.del(...keys.map((key) => `lock:${key}`));
    for (const key of keys) {
      const lock = await engines[0].tryAcquire(key, { ttl: TTL });
      expect(lock?.isHeld).toBe(true);
      expect(await lock!.release()).toBe('released');
    }
    expect(await lockKeys(redis.probe)).toEqual([]);
  }

  it(
    'never reports a lock, while a fast client takes each key as its lease ends; then all is free',
    async () => {
      for (let round = 0; round < CHAOS.rounds; round++) await delayedRound(round);
    },
    timeoutFor(WAIT + 6 * TO_CLIENT_MS),
  );

  // Canary: a naive SET NX PX through the same slow link says "acquired" for a key that is,
  // by the time it says so, another process's.
  it('canary: a naive SET NX PX client reports acquired while a direct client holds the key', async () => {
    // ioredis defaults, through the proxy: the naive lock's own connection.
    const slow = new Redis({ port: proxy.port });
    slow.on('error', () => undefined);
    try {
      await slow.ping();
      proxy.setDelay(TO_SERVER_MS, 'toServer');
      proxy.setDelay(TO_CLIENT_MS, 'toClient');

      const taking = NaiveLock.take(slow, 'lock:naive', 'naive', TTL);
      const takenAt = await takeOnceFree('lock:naive');
      const naive = await taking;
      const reportedAt = performance.now();

      reportFigures('delayed replies canary', {
        directBeforeNaiveMs: Math.round(reportedAt - takenAt),
      });
      expect(naive).toBeDefined();
      expect(takenAt).toBeLessThan(reportedAt);
      // Two holders: the naive one was told "acquired", and Redis has the direct client's value.
      expect(await redis.probe.get('lock:naive')).toBe('direct');
      expect(await naive!.heldInRedis(redis.probe)).toBe(false);
    } finally {
      slow.disconnect();
    }
  });
});
