import { Mutex, Semaphore } from 'redis-semaphore';
import { connect, quit } from './connect.js';
import type { Contender } from './contender.js';

/**
 * redis-semaphore's `Mutex` (SET NX PX), or with `limit` its `Semaphore` (a sorted set of
 * holders): polled every `retryInterval` (default 10 ms) until `acquireTimeout`, refreshed by a
 * per-lock interval at 0.8 × lockTimeout. Its defaults in every cell; the cell's wait becomes
 * `acquireTimeout` and its ttl `lockTimeout`.
 */
export async function createRedisSemaphore(url: string, limit?: number): Promise<Contender> {
  const client = await connect(url);
  const kind = limit === undefined ? 'Mutex' : `Semaphore(limit ${limit})`;
  return {
    name: 'redis-semaphore',
    settings: `${kind} defaults: retryInterval 10 ms; acquireTimeout = wait, lockTimeout = ttl`,
    async acquire(key, { ttl, wait, signal }) {
      // Its acquire loop runs only while now < start + acquireTimeout: a wait of 0 would never try.
      const once = wait <= 0 ? { acquireAttemptsLimit: 1 } : { acquireTimeout: wait };
      const options = { lockTimeout: ttl, ...once };
      const lock =
        limit === undefined
          ? new Mutex(client, key, options)
          : new Semaphore(client, key, limit, options);
      try {
        if (!(await lock.tryAcquire(signal))) return undefined;
      } catch (error) {
        if (signal?.aborted) return undefined;
        throw error;
      }
      return { release: () => lock.release() };
    },
    close: () => quit(client),
  };
}
