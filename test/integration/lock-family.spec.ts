import type { Cluster } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockLostError } from '../../lib/errors/lock.errors.js';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import { describeLockFamily } from '../harness/lock-family.contract.js';
import { useRedisCluster } from '../harness/redis-cluster.js';
import { scanKeys } from '../harness/scan-keys.js';
import { engineOn } from '../harness/test-engine.js';
import { useRedisServer } from '../harness/use-redis.js';

// The lock family's contract, as on the memory store, on Redis: one server and a Cluster.

describe('the lock family on one Redis server', () => {
  const redis = useRedisServer();
  let engine: LockEngine;
  beforeEach(() => {
    engine = engineOn(new RedisLockStore(redis.client));
  });
  afterEach(async () => {
    await engine.close();
    await redis.probe.flushall();
  });
  describeLockFamily(() => ({ engine, keys: () => scanKeys(redis.probe, 'lock:*') }));

  it.each([[{ limit: 2 }], [{ mode: 'read' as const }], [{ mode: 'write' as const }]])(
    'tells a holder of %j that its place is gone: its signal aborts with LockLostError',
    async (kind) => {
      const lock = await engine.acquire('gone', { ...kind, ttl: 600 });
      const aborted = new Promise((resolve) =>
        lock.signal.addEventListener('abort', () => resolve(lock.signal.reason)),
      );
      await redis.probe.del('lock:gone');
      expect(await aborted).toBeInstanceOf(LockLostError);
      expect(lock.isHeld).toBe(false);
    },
  );
});

describe('the lock family on a 3-master Redis Cluster', () => {
  const redis = useRedisCluster();
  let probe: Cluster;
  let engine: LockEngine;
  beforeAll(() => {
    probe = redis.cluster.client();
  });
  afterAll(() => probe?.disconnect());
  beforeEach(() => {
    engine = engineOn(new RedisLockStore(redis.cluster.client(), { ownsClient: true }));
  });
  afterEach(async () => {
    await engine.close();
    await Promise.all(probe.nodes('master').map((node) => node.flushall()));
  });
  // SCAN runs per node: the keys are those of every master.
  describeLockFamily(() => ({
    engine,
    keys: async () => {
      const masters = probe.nodes('master');
      const perNode = await Promise.all(masters.map((node) => scanKeys(node, 'lock:*')));
      return perNode.flat().sort();
    },
  }));
});
