import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import { RedlockLockStore } from '../../lib/stores/redlock/redlock-lock.store.js';
import { useRedisCluster } from '../harness/redis-cluster.js';
import { startRedisFleet, type RedisFleet } from '../harness/redis-fleet.js';
import { RedisServer } from '../harness/redis-server.js';
import { describeStoreContract } from '../harness/store-contract.js';

// The stores of this package keep the contract that MemoryLockStore, its reference, keeps.

describe('on one Redis server', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterAll(() => server?.stop());
  describeStoreContract(
    'RedisLockStore',
    () => new RedisLockStore(server.client(), { ownsClient: true }),
  );
});

describe('on a 3-master Redis Cluster', () => {
  const redis = useRedisCluster();
  // Every test's keys share one hash tag, as a multi-key lock on a cluster must.
  describeStoreContract(
    'RedisLockStore (Cluster)',
    () => new RedisLockStore(redis.cluster.client(), { ownsClient: true }),
    '{contract}',
  );
});

describe('on 3 Redlock nodes', () => {
  let fleet: RedisFleet;
  beforeAll(async () => {
    fleet = await startRedisFleet(3);
  });
  afterAll(() => fleet?.stopAll());
  describeStoreContract(
    'RedlockLockStore',
    () => new RedlockLockStore(fleet.clients(), { ownsClients: true }),
  );
});
