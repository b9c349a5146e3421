import Redlock, { ExecutionError, type Settings } from 'redlock';
import type { Redis } from 'ioredis';
import { connect, quit } from './connect.js';
import type { Contender, Tuning } from './contender.js';

/**
 * node-redlock v5 on a single client. `defaults`: retryCount 10, retryDelay 200 ± 100 ms (so
 * about 2 s of retrying). `hot-key`: retry for ever every 10 ± 5 ms, the same cadence as
 * redis-semaphore's default poll, so every waiter eventually gets the key.
 */
export const HOT_KEY = { retryCount: -1, retryDelay: 10, retryJitter: 5 } as const;

/** What node-redlock and its fork share: an acquire that retries by its settings. */
export interface RedlockLike {
  acquire(keys: string[], ttl: number): Promise<{ release(): Promise<unknown> }>;
}

/**
 * A contender over node-redlock or its fork on `client`: `refused` tells the error of a lock
 * not acquired within its retries from a failure.
 */
export function redlockContender(
  name: string,
  client: Redis,
  redlock: RedlockLike,
  refused: (error: unknown) => boolean,
  tuning: Tuning,
): Contender {
  return {
    name,
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
        if (refused(error)) return undefined;
        throw error;
      }
    },
    close: () => quit(client),
  };
}

export async function createRedlock(url: string, tuning: Tuning): Promise<Contender> {
  const client = await connect(url);
  const settings: Partial<Settings> = tuning === 'hot-key' ? HOT_KEY : {};
  const redlock = new Redlock([client], settings);
  return redlockContender('redlock', client, redlock, (e) => e instanceof ExecutionError, tuning);
}
