import type { LockEngine } from '../../lib/engine/lock-engine.js';
import type { Lock } from '../../lib/engine/lock.interface.js';
import { LockKeyError, LockOptionsError } from '../../lib/errors/lock.errors.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import { CommandMonitor } from '../e2e/seckill/command-monitor.js';
import { reportFigures } from '../harness/figures.js';
import { scanKeys } from '../harness/scan-keys.js';
import { useRedisServer } from '../harness/use-redis.js';
import { outcome } from '../harness/waits.js';
import { CHAOS } from '../harness/chaos-profile.js';
import { NAMED_CASES, untyped, type InputCase, type Locker } from '../harness/bad-inputs.js';
import { randomCases } from '../harness/random-inputs.js';

// A failure names its case with this seed; CHAOS_SEED=<seed> replays the same inputs.
const SEED = Number(process.env.CHAOS_SEED ?? 0x5eed);
const RANDOM_KEYS = 240 * CHAOS.rounds;

describe('bad input, named and random: a typed error before any Redis command, or a clean lock', () => {
  let engine: LockEngine;
  let monitor: CommandMonitor;
  // Closed while Redis is still up: a monitor's QUIT to a stopped server would retry for good.
  const redis = useRedisServer({
    beforeStop: async () => {
      await engine?.close();
      await monitor?.stop();
    },
  });

  beforeAll(async () => {
    engine = createLockEngine({ redis: redis.client, shutdownTimeout: 0 });
    monitor = await CommandMonitor.start(redis.client);
    // Every connection's handshake (HELLO, INFO) over with before the first case watches.
    await monitor.during(() => redis.client.ping());
  });

  /**
   * Each entry point once; then a PING on the engine's connection, so that anything it sent
   * meanwhile has run, and MONITOR has shown it, by the time `during` returns.
   */
  async function rejectedBeforeRedis(input: InputCase, locker: Locker): Promise<void> {
    const { key, options } = input;
    let ran = 0;
    const { result, commands } = await monitor.during(async () => {
      const settled = [
        await outcome(locker.acquire(key, options)),
        await outcome(locker.tryAcquire(key, options)),
        await outcome(locker.withLock(key, () => void ran++, options)),
      ];
      await redis.client.ping();
      return settled.map(({ error, value }) => (error as Error)?.name ?? `resolved ${value}`);
    });
    const sent = commands.filter(([name]) => name.toLowerCase() !== 'ping');
    const type = input.expected === 'key' ? LockKeyError : LockOptionsError;
    expect({ input: input.name, result, ran, sent }).toEqual({
      input: input.name,
      result: [type.name, type.name, type.name],
      ran: 0,
      sent: [],
    });
  }

  /** Acquire and release through each entry point: the key in Redis is exactly prefix + name. */
  async function cleanLock(input: InputCase): Promise<void> {
    const { key, options } = input;
    const names = Array.isArray(key) ? [...new Set(key as string[])] : [key as string];
    const holds = async (lock: Lock): Promise<void> => {
      expect({ input: input.name, keys: lock.keys }).toEqual({ input: input.name, keys: names });
      for (const name of names) expect(await redis.probe.get(`lock:${name}`)).toBe(lock.token);
    };
    for (const take of [engine.acquire, engine.tryAcquire] as const) {
      const lock = (await take.call(engine, key as string, options as object))!;
      await holds(lock);
      expect({ input: input.name, released: await lock.release() }).toEqual({
        input: input.name,
        released: 'released',
      });
    }
    let ran = 0;
    await engine.withLock(
      key as string,
      async (lock) => void (await holds(lock), ran++),
      options as object,
    );
    expect(ran).toBe(1);
    for (const name of names) expect(await redis.probe.exists(`lock:${name}`)).toBe(0);
  }

  async function check(inputs: readonly InputCase[]): Promise<Record<string, number>> {
    const tally: Record<string, number> = {};
    for (const input of inputs) {
      if (input.expected === 'ok') await cleanLock(input);
      else await rejectedBeforeRedis(input, untyped(engine));
      tally[input.expected] = (tally[input.expected] ?? 0) + 1;
    }
    // Nothing stray: fence counters alone stay behind, and they expire.
    const left = await scanKeys(redis.probe);
    const fences = left.filter((key) => key.endsWith('\x1ffence'));
    expect(left.filter((key) => !fences.includes(key))).toEqual([]);
    for (const fence of fences) expect(await redis.probe.pttl(fence)).toBeGreaterThan(0);
    return tally;
  }

  it('named inputs: at least 40 bad ones, each refused before Redis; the odd valid ones lock', async () => {
    const tally = await check(NAMED_CASES);

    reportFigures('bad input, named', tally);
    expect((tally.key ?? 0) + (tally.options ?? 0)).toBeGreaterThanOrEqual(40);
    expect(tally.ok).toBeGreaterThan(0);
  });

  it(`random inputs (seed ${SEED}): the documented rules decide, and Redis sees only valid keys`, async () => {
    const inputs = randomCases(SEED, RANDOM_KEYS);
    const startedAt = performance.now();
    const tally = await check(inputs);

    reportFigures('bad input, random', {
      seed: SEED,
      ...tally,
      ms: Math.round(performance.now() - startedAt),
    });
    expect(inputs.length).toBeGreaterThanOrEqual(RANDOM_KEYS);
    // Both sides of every rule are exercised, not just one.
    for (const expected of ['key', 'options', 'ok']) expect(tally[expected]).toBeGreaterThan(20);
  });

  // Canary: a locker that validates only after sending, on the same checks, is caught twice:
  // MONITOR shows its command, and the key it set is left behind.
  it('canary: a bad key sent to the store before validation is seen, and leaves a stray key', async () => {
    const store = new RedisLockStore(redis.client);
    const leaky = async (key: unknown): Promise<never> => {
      await store.tryAcquire({
        keys: [`lock:${String(key)}`],
        token: 'leaked',
        ttl: 60_000,
        fencing: false,
      });
      throw new LockKeyError('validated too late');
    };
    const locker: Locker = { acquire: leaky, tryAcquire: leaky, withLock: leaky };

    const caught = await outcome(
      rejectedBeforeRedis({ name: 'a\\nb', key: 'a\nb', expected: 'key' }, locker),
    );

    expect(String(caught.error)).toMatch(/"sent"/);
    expect(String(caught.error)).toMatch(/"set"/);
    expect(await scanKeys(redis.probe, 'lock:*')).toContain('lock:a\nb');
    expect(await redis.probe.get('lock:a\nb')).toBe('leaked');
    await redis.probe.del('lock:a\nb');
  });
});
