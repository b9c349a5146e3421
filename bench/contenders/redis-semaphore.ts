import { Mutex } from 'redis-semaphore';
import { connect, quit } from './connect.js';
import type { Contender } from './contender.js';

/**
 * redis-semaphore's `Mutex`: SET NX PX, polled every `retryInterval` (default 10 ms) until
 * `acquireTimeout`, refreshed by a per-lock interval at 0.8 × lockTimeout. Its defaults in
 * every cell; the cell's wait becomes `acquireTimeout` and its ttl `lockTimeout`.
 */
export async function createRedisSemaphore(url: string): Promise<Contender> {
  const client = await connect(url);
  return {
    name: 'redis-semaphore',
    settings: 'defaults: retryInterval 10 ms; acquireTimeout = wait, lockTimeout = ttl',
    async acquire(key, { ttl, wait, signal }) {
      // Its acquire loop runs only while now < start + acquireTimeout: a wait of 0 would never try.
      const once = wait <= 0 ? { acquireAttemptsLimit: 1 } : { acquireTimeout: wait };
      const mutex = new Mutex(client, key, { lockTimeout: ttl, ...once });
      try {
        if (!(await mutex.tryAcquire(signal))) return undefined;
      } catch (error) {
        if (signal?.aborted) return undefined;
        throw error;
      }
      return { release: () => mutex.release() };
    },
    close: () => quit(client),
  };
}
