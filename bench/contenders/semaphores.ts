import { Semaphore } from 'redis-semaphore';
import { LockBusyError, LockService, type LockOptions } from '../../dist/index.js';
import { connect, quit } from './connect.js';
import type { Contender } from './contender.js';

/**
 * This library's lock family through `LockService`, with `kind` (a semaphore's `limit`, or a
 * read-write side) added to every acquire. Built as in library.ts.
 */
export async function createLibraryKind(
  url: string,
  kind: Pick<LockOptions, 'limit' | 'mode'>,
  name = 'library',
): Promise<Contender> {
  const client = await connect(url);
  const service = new LockService({ redis: client });
  await service.onModuleInit();
  return {
    name,
    settings: `LockService defaults, ${JSON.stringify(kind)}`,
    async acquire(key, { ttl, wait, signal }) {
      try {
        const lock = await service.acquire(key, { ...kind, ttl, wait, signal });
        return { release: async () => void (await lock.release()) };
      } catch (error) {
        if (error instanceof LockBusyError || signal?.aborted) return undefined;
        throw error;
      }
    },
    async close() {
      await service.onApplicationShutdown();
      await quit(client);
    },
  };
}

/**
 * redis-semaphore's `Semaphore`: a sorted set of holders, polled every `retryInterval` (default
 * 10 ms) until `acquireTimeout`. Its defaults, with the cell's wait and ttl.
 */
export async function createRedisSemaphoreOf(url: string, limit: number): Promise<Contender> {
  const client = await connect(url);
  return {
    name: 'redis-semaphore',
    settings: `Semaphore(limit ${limit}) defaults: retryInterval 10 ms; acquireTimeout = wait`,
    async acquire(key, { ttl, wait, signal }) {
      const semaphore = new Semaphore(client, key, limit, {
        lockTimeout: ttl,
        acquireTimeout: wait,
      });
      try {
        if (!(await semaphore.tryAcquire(signal))) return undefined;
      } catch (error) {
        if (signal?.aborted) return undefined;
        throw error;
      }
      return { release: () => semaphore.release() };
    },
    close: () => quit(client),
  };
}
