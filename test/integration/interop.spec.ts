import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockBusyError } from '../../lib/errors/lock.errors.js';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import { turnsKeyOf } from '../../lib/stores/redis/redis-commands.js';
import { portLike } from '../harness/client-under-test.js';
import { createTestEngine } from '../harness/test-engine.js';
import { useRedisServer, useTestEngine } from '../harness/use-redis.js';
import { activeChannels } from '../harness/command-stats.js';
import { figure } from '../harness/figures.js';
import { loopLag } from '../harness/loop-lag.js';
import { outcome, waitUntil, within } from '../harness/waits.js';

// Short, so a waiter that depends on polling (no PUBLISH from a plain client) gets in quickly.
const POLL_CAP = 200;
// fallbackDelay adds up to 1 + base/10 ms of jitter; then one attempt's round trip.
const POLL_SLACK = 1 + POLL_CAP / 10 + 80;

describe('interop with plain SET NX PX locks', () => {
  const redis = useRedisServer();
  // The engine under test uses redis.client; redis.probe stands for an app that locks with plain
  // SET NX PX, without this library.
  const fixture = useTestEngine(redis, { pollCap: POLL_CAP });

  it('is blocked by a plain SET NX PX lock', async () => {
    expect(await redis.probe.set('lock:k', 'their-token', 'PX', 5_000, 'NX')).toBe('OK');

    expect(await fixture.engine.tryAcquire('k')).toBeUndefined();
    const calledAt = performance.now();
    const waited = await outcome(fixture.engine.acquire('k', { wait: 100 }));
    expect(waited.error).toBeInstanceOf(LockBusyError);
    expect(waited.at - calledAt).toBeGreaterThanOrEqual(90);
    expect(await redis.probe.get('lock:k')).toBe('their-token');
  });

  it('is blocked by a plain SET NX lock without expiry', async () => {
    expect(await redis.probe.set('lock:k', 'their-token', 'NX')).toBe('OK');
    expect(await fixture.engine.tryAcquire('k')).toBeUndefined();
    expect(await redis.probe.pttl('lock:k')).toBe(-1); // and leaves it as it was
  });

  it('blocks a plain SET NX while held, and stores the token with a PX lease', async () => {
    const lock = await fixture.engine.acquire('k', { ttl: 5_000 });

    expect(await redis.probe.set('lock:k', 'their-token', 'PX', 5_000, 'NX')).toBeNull();
    expect(await redis.probe.get('lock:k')).toBe(lock.token);
    const pttl = await redis.probe.pttl('lock:k');
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(5_000);

    expect(await lock.release()).toBe('released');
    expect(await redis.probe.set('lock:k', 'their-token', 'PX', 5_000, 'NX')).toBe('OK');
  });

  it('hands the lock to our waiter after a plain DEL, by polling since nothing is published', async () => {
    expect(await redis.probe.set('lock:k', 'their-token', 'PX', 5_000, 'NX')).toBe('OK');
    const waiting = outcome(fixture.engine.acquire('k', { wait: 5_000 }));
    await waitUntil(
      'the waiter to subscribe',
      async () => (await activeChannels(redis.probe)).length === 1,
    );

    const lag = loopLag();
    const deletedAt = performance.now();
    expect(await redis.probe.del('lock:k')).toBe(1);
    const result = await within('the hand-off', waiting, 2_000);
    const slack = lag.stop();

    figure('interop: plain DEL -> our waiter acquired (ms)', result.at - deletedAt);
    expect(result.error).toBeUndefined();
    expect(await redis.probe.get('lock:k')).toBe(result.value!.token);
    // Their 5 s lease would still be running; only polling capped at POLL_CAP finds the key free.
    expect(result.at - deletedAt).toBeLessThanOrEqual(POLL_CAP + POLL_SLACK + slack);
    expect(await result.value!.release()).toBe('released');
  });
});

describe('interop across client libraries: ioredis, node-redis and Valkey GLIDE', () => {
  const redis = useRedisServer();
  const kinds = ['ioredis', 'node-redis', 'glide'] as const;
  let engines: Record<(typeof kinds)[number], LockEngine>;

  beforeAll(() => {
    const storeOf = (kind: (typeof kinds)[number]) =>
      kind === 'ioredis'
        ? new RedisLockStore(redis.client)
        : new RedisLockStore(portLike(redis.client, kind), { ownsClient: true });
    engines = Object.fromEntries(
      kinds.map((kind) => [kind, createTestEngine(redis.client, { store: storeOf(kind) })]),
    ) as typeof engines;
  });
  afterAll(() => Promise.all(kinds.map((kind) => engines?.[kind]?.close())));
  afterEach(() => redis.probe.flushall());

  it.each(
    kinds.flatMap((holder) =>
      kinds.filter((other) => other !== holder).map((other) => [holder, other]),
    ),
  )('a lock taken through %s excludes %s on the same key', async (holder, other) => {
    const lock = await engines[holder].acquire('shared', { ttl: 5_000 });
    expect((engines[holder].store as RedisLockStore).port.kind).toBe(holder);
    expect((engines[other].store as RedisLockStore).port.kind).toBe(other);
    expect(await engines[other].tryAcquire('shared')).toBeUndefined();
    expect(await redis.probe.get('lock:shared')).toBe(lock.token);
    expect(await lock.release()).toBe('released');
    const next = await engines[other].tryAcquire('shared');
    expect(next).toBeDefined();
    expect(await next!.release()).toBe('released');
  });

  it('hands the key from one library to the next by its release notification, round the three', async () => {
    // No polls: a waiter that missed the notification would wait out the 10 s poll cap.
    let lock = await engines.ioredis.acquire('relay', { ttl: 5_000 });
    for (const next of ['node-redis', 'glide', 'ioredis'] as const) {
      const waiting = outcome(engines[next].acquire('relay', { ttl: 5_000, wait: 3_000 }));
      await waitUntil(
        'the waiter in line',
        async () => (await redis.probe.llen(turnsKeyOf('lock:relay'))) > 0,
      );
      const releasedAt = performance.now();
      expect(await lock.release()).toBe('released');
      const result = await within('the hand-off', waiting, 2_000);
      expect(result.error).toBeUndefined();
      expect(result.at - releasedAt).toBeLessThan(POLL_CAP);
      lock = result.value!;
    }
    expect(await lock.release()).toBe('released');
  });
});
