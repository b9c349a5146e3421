import type { Cluster, Redis } from 'ioredis';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import { RedlockLockStore } from '../../lib/stores/redlock/redlock-lock.store.js';
import { useRedisCluster } from '../harness/redis-cluster.js';
import { startRedisFleet, type RedisFleet } from '../harness/redis-fleet.js';
import { RedisServer } from '../harness/redis-server.js';
import { describeStoreContract } from '../harness/store-contract.js';
import { clientUnderTest, storeClientFor } from '../harness/client-under-test.js';

/** The Redis store on `client`'s server, through the client library under test. */
function storeOn(client: Redis | Cluster): RedisLockStore {
  const { client: target } = storeClientFor(client);
  const store = new RedisLockStore(target, { ownsClient: true });
  // The client library the suite says it runs on is the one the store speaks through.
  if (store.port.kind !== clientUnderTest()) throw new Error(`on ${store.port.kind}`);
  if (target !== client) client.disconnect();
  return store;
}

// The stores of this package keep the contract that MemoryLockStore, its reference, keeps.

describe('on one Redis server', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterAll(() => server?.stop());
  describeStoreContract(`RedisLockStore (${clientUnderTest()})`, () => storeOn(server.client()));
});

describe('on a 3-master Redis Cluster', () => {
  const redis = useRedisCluster();
  // Every test's keys share one hash tag, as a multi-key lock on a cluster must.
  describeStoreContract(
    `RedisLockStore (Cluster, ${clientUnderTest()})`,
    () => storeOn(redis.cluster.client({ lazyConnect: true })),
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
