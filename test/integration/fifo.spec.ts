import type { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import type { Lock } from '../../lib/engine/lock.interface.js';
import { reportFigures } from '../harness/figures.js';
import { ObservedStore } from '../harness/observed-store.js';
import { createTestEngine } from '../harness/test-engine.js';
import { useRedisServer } from '../harness/use-redis.js';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';

const WORKERS = 20;
const STEP_TIMEOUT = 5_000;

/** Calls to EVALSHA the server has run (both lock scripts go through it once loaded). */
async function evalshaCalls(client: Redis): Promise<number> {
  const stats = await client.info('commandstats');
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

/** Resolves once `store` sees an attempt fail while subscribed; rejects at the deadline. */
function parked(store: ObservedStore): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the queue head never parked')), STEP_TIMEOUT);
    store.onParked = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}

describe('local FIFO queue on one key', () => {
  let store: ObservedStore;
  let engine: LockEngine;
  // The default: releases hand the lock to the next waiter here, without Redis, 16 times in a row.
  let passing: LockEngine;
  // Stands for another process: its own connection and engine, holding the key at the start.
  let other: LockEngine;
  const redis = useRedisServer({
    beforeStop: async () => {
      await engine?.close();
      await passing?.close();
      await other?.close();
    },
  });

  beforeAll(async () => {
    store = new ObservedStore(new RedisLockStore(redis.client));
    // No poll tick within a test: any attempt after the first must come from a wake-up. Every
    // release goes through Redis, so each hand-off is seen there.
    engine = createTestEngine(redis.client, { store, pollCap: 30_000, localHandoffs: 0 });
    passing = createTestEngine(redis.client, { store, pollCap: 30_000 });
    other = createTestEngine(redis.connect());
    // Loads both scripts, so that every later call is one EVALSHA (no NOSCRIPT, no EVAL).
    await (await other.acquire('warm-up')).release();
  });

  /** Each worker takes the lock, notes its turn, yields once so others could cut in, releases. */
  function worker(key: string, index: number, order: number[], on = engine): Promise<string> {
    return on.withLock(key, async (lock) => {
      order.push(index);
      await new Promise(setImmediate);
      return lock.token;
    });
  }

  it('queued behind another process, 20 waiters get the lock in arrival order, one store call per hand-off', async () => {
    const key = 'fifo-queued';
    const blocking: Lock = await other.acquire(key);
    const headParked = parked(store);
    const order: number[] = [];
    const workers = Array.from({ length: WORKERS }, (_, i) => worker(key, i, order));
    // The first arrival tried, failed, and waits at the head with the other 19 behind it.
    await headParked;
    const callsBefore = await evalshaCalls(redis.client);
    const attemptsBefore = store.attempts;

    await blocking.release();
    await Promise.all(workers);

    const calls = (await evalshaCalls(redis.client)) - callsBefore;
    const attempts = store.attempts - attemptsBefore;
    reportFigures('fifo hand-offs', { workers: WORKERS, evalsha: calls, attempts });
    expect(order).toEqual(Array.from({ length: WORKERS }, (_, i) => i));
    // Only the first waiter tries: each release then sets the key for the next waiter here in
    // the same call. A waiter that polled, or a wake-up sent to every waiter, would show here.
    expect(attempts).toBe(1);
    // Server side: the blocker's release (one call: the head here marked the key, and the
    // release that finds the mark hands the key on in the same script), the first waiter's
    // attempt, one release per worker.
    expect(calls).toBe(2 + WORKERS);
  });

  it('arrivals spread over hand-offs still get the lock in arrival order', async () => {
    const key = 'fifo-staggered';
    const order: number[] = [];
    const workers: Promise<string>[] = [];
    // A new arrival every turn of the event loop, while earlier ones hold, wait or hand off.
    for (let i = 0; i < WORKERS; i++) {
      workers.push(worker(key, i, order));
      await new Promise(setImmediate);
    }
    await Promise.all(workers);

    expect(order).toEqual(Array.from({ length: WORKERS }, (_, i) => i));
  });

  it('hands the lock on inside the process 16 times in a row, each confirmed in Redis, then once through Redis, in order', async () => {
    const key = 'fifo-passing';
    const blocking: Lock = await other.acquire(key);
    const headParked = parked(store);
    const order: number[] = [];
    const workers = Array.from({ length: WORKERS }, (_, i) => worker(key, i, order, passing));
    await headParked;
    const callsBefore = await evalshaCalls(redis.client);
    const attemptsBefore = store.attempts;

    await blocking.release();
    const tokens = await Promise.all(workers);

    const calls = (await evalshaCalls(redis.client)) - callsBefore;
    const attempts = store.attempts - attemptsBefore;
    reportFigures('fifo local hand-offs', { workers: WORKERS, evalsha: calls, attempts });
    expect(order).toEqual(Array.from({ length: WORKERS }, (_, i) => i));
    // Worker 0 won the key from Redis and its lease went on to workers 1-16 without a new
    // attempt, each hand-off confirmed by one compare-and-PEXPIRE; worker 16's release then set
    // the key for worker 17 (a new lease), which went on to 18, 19.
    expect(attempts).toBe(1);
    expect(new Set(tokens.slice(0, 17)).size).toBe(1);
    expect(new Set(tokens.slice(17)).size).toBe(1);
    expect(tokens[17]).not.toBe(tokens[0]);
    // The blocker's release (one call, as above), worker 0's attempt, the releases of workers 16
    // and 19, and the 18 hand-offs.
    expect(calls).toBe(4 + 18);
    expect(await redis.client.exists(`lock:${key}`)).toBe(0);
  });

  it('keeps a key hot between two callers that loop with no critical section: one store call per lock, no attempt', async () => {
    const key = 'fifo-looping';
    const rounds = 200;
    const callsBefore = await evalshaCalls(redis.client);
    const attemptsBefore = store.attempts;
    const loop = async (): Promise<void> => {
      for (let round = 0; round < rounds; round++) await (await passing.acquire(key)).release();
    };

    await Promise.all([loop(), loop()]);

    const calls = (await evalshaCalls(redis.client)) - callsBefore;
    const attempts = store.attempts - attemptsBefore;
    reportFigures('fifo looping callers', { locks: 2 * rounds, evalsha: calls, attempts });
    // Each release hands the key to the other caller, confirmed by one compare-and-PEXPIRE, and
    // every 17th goes through Redis, setting the key for the other caller in the same call.
    // That holder's release then waits a tick, in which the releaser comes back and queues:
    // without that tick, the two would take turns through Redis, an attempt and a release per
    // lock.
    expect(attempts).toBeLessThanOrEqual(3);
    expect(calls).toBeLessThanOrEqual(2 * rounds + 3);
    expect(await redis.client.exists(`lock:${key}`)).toBe(0);
  });
});
