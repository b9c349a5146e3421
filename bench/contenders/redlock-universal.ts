import {
  createLock,
  GlideAdapter,
  IoredisAdapter,
  LockAcquisitionError,
  NodeRedisAdapter,
  type RedisAdapter,
} from 'redlock-universal';
import { openConnection, type BenchConnection } from './client-connections.js';
import type { BenchClient, Contender, Tuning } from './contender.js';

/** Its default retry delay; `hot-key` polls at redlock's and redis-semaphore's cadence. */
const RETRY_DELAY: Record<Tuning, number> = { defaults: 100, 'hot-key': 10 };

/**
 * redlock-universal 0.8 as its README shows it: an adapter on the client (`IoredisAdapter`,
 * `NodeRedisAdapter`, `GlideAdapter`), and `createLock({ adapter, key, ttl })` per key, then
 * `acquire()` and `release(handle)`. Its default mode ('standard') keeps a circuit breaker whose
 * health check PINGs before a new lock object's first SET: on a fresh key, a cycle is PING, SET
 * NX PX and a compare-and-delete EVALSHA. It waits by retrying SET NX every `retryDelay` up to
 * `retryAttempts` times and takes no abort signal: the cell's wait becomes retryAttempts ×
 * retryDelay (as redis-semaphore's acquireTimeout), its ttl the lock's ttl.
 */
export async function createRedlockUniversal(
  url: string,
  tuning: Tuning,
  client: BenchClient = 'ioredis',
): Promise<Contender> {
  const connection = await openConnection(client, url);
  const adapter = adapterOf(connection);
  const retryDelay = RETRY_DELAY[tuning];
  return {
    name: 'redlock-universal',
    settings: `${client}: createLock per key, 'standard' mode (default; circuit breaker on); retryDelay ${retryDelay} ms${tuning === 'defaults' ? ' (default)' : ''}, retryAttempts = wait / retryDelay`,
    async acquire(key, { ttl, wait }) {
      const retryAttempts = Math.ceil(wait / retryDelay);
      const lock = createLock({ adapter, key, ttl, retryAttempts, retryDelay });
      try {
        const handle = await lock.acquire();
        return { release: async () => void (await lock.release(handle)) };
      } catch (error) {
        if (error instanceof LockAcquisitionError) return undefined;
        throw error;
      }
    },
    close: () => connection.close(),
  };
}

function adapterOf(connection: BenchConnection): RedisAdapter {
  switch (connection.kind) {
    case 'ioredis':
      return new IoredisAdapter(connection.client);
    case 'node-redis':
      return new NodeRedisAdapter(connection.client);
    case 'glide':
      return new GlideAdapter(connection.client);
  }
}
