import type { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/core/lock-engine.js';
import type { Lock } from '../../lib/core/lock.interface.js';
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
  // Stands for another process: its own connection and engine, holding the key at the start.
  let other: LockEngine;
  const redis = useRedisServer({
    beforeStop: async () => {
      await engine?.close();
      await other?.close();
    },
  });

  beforeAll(async () => {
    store = new ObservedStore(new RedisLockStore(redis.client));
    // No poll tick within a test: any attempt after the first must come from a wake-up.
    engine = createTestEngine(redis.client, { store, pollCap: 30_000 });
    other = createTestEngine(redis.connect());
    // Loads both scripts, so that every later call is one EVALSHA (no NOSCRIPT, no EVAL).
    await (await other.acquire('warm-up')).release();
  });

  /** Each worker takes the lock, notes its turn, yields once so others could cut in, releases. */
  function worker(key: string, index: number, order: number[]): Promise<void> {
    return engine.withLock(key, async () => {
      order.push(index);
      await new Promise(setImmediate);
    });
  }

  it('queued behind another process, 20 waiters get the lock in arrival order, one attempt each', async () => {
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
    // One winning attempt per waiter, and nobody else knocking: a waiter that polled, or a
    // wake-up sent to every waiter, would show here.
    expect(attempts).toBe(WORKERS);
    // Server side: the blocker's release, then one acquire and one release per worker.
    expect(calls).toBeLessThanOrEqual(1 + 2 * WORKERS);
  });

  it('arrivals spread over hand-offs still get the lock in arrival order', async () => {
    const key = 'fifo-staggered';
    const order: number[] = [];
    const workers: Promise<void>[] = [];
    // A new arrival every turn of the event loop, while earlier ones hold, wait or hand off.
    for (let i = 0; i < WORKERS; i++) {
      workers.push(worker(key, i, order));
      await new Promise(setImmediate);
    }
    await Promise.all(workers);

    expect(order).toEqual(Array.from({ length: WORKERS }, (_, i) => i));
  });
});
