import type { Redis } from 'ioredis';
import type { RedisServer } from '../../harness/redis-server.js';
import { useRedisServer } from '../../harness/use-redis.js';
import { AppFleet } from './app-fleet.js';

/** What `useSaleFleet` set up; read it in hooks and tests, once `beforeAll` has run. */
export interface SaleHarness {
  /** The Redis every instance of the file shares. */
  readonly server: RedisServer;
  /** The test's own connection, to set up and audit the sale. */
  readonly client: Redis;
  /** Start the file's instances on it in `beforeAll`; they are stopped first in `afterAll`. */
  readonly fleet: AppFleet;
}

/**
 * A redis-server, a connection to it and a fleet of sample app processes for one test file.
 * `afterAll` stops every instance, then runs `beforeStop`, then closes the connection and stops
 * the server.
 */
export function useSaleFleet(options: { beforeStop?: () => unknown } = {}): SaleHarness {
  const fleet = new AppFleet();
  const redis = useRedisServer({
    beforeStop: async () => {
      await fleet.stopAll();
      await options.beforeStop?.();
    },
  });
  return {
    get server() {
      return redis.server;
    },
    get client() {
      return redis.client;
    },
    fleet,
  };
}
