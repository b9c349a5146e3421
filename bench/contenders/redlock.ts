import Redlock, { ExecutionError, type Settings } from 'redlock';
import { connect, quit } from './connect.js';
import type { Contender, Tuning } from './contender.js';

/**
 * node-redlock v5 on a single client. `defaults`: retryCount 10, retryDelay 200 ± 100 ms (so
 * about 2 s of retrying). `hot-key`: retry for ever every 10 ± 5 ms, the same cadence as
 * redis-semaphore's default poll, so every waiter eventually gets the key.
 */
const HOT_KEY: Partial<Settings> = { retryCount: -1, retryDelay: 10, retryJitter: 5 };

export async function createRedlock(url: string, tuning: Tuning): Promise<Contender> {
  const client = await connect(url);
  const settings = tuning === 'hot-key' ? HOT_KEY : {};
  const redlock = new Redlock([client], settings);
  return {
    name: 'redlock',
    settings:
      tuning === 'hot-key'
        ? 'retryCount -1 (for ever), retryDelay 10 ms, retryJitter 5 ms'
        : 'defaults: retryCount 10, retryDelay 200 ms, retryJitter 100 ms',
    // No abort and no wait: its retry settings decide how long it tries.
    async acquire(key, { ttl }) {
      try {
        const lock = await redlock.acquire([key], ttl);
        return { release: async () => void (await lock.release()) };
      } catch (error) {
        if (error instanceof ExecutionError) return undefined;
        throw error;
      }
    },
    close: () => quit(client),
  };
}
