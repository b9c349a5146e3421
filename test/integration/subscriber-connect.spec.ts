import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import { RedisCluster } from '../harness/redis-cluster.js';
import { useRedisServer } from '../harness/use-redis.js';
import { outcome } from '../harness/waits.js';

// ioredis 5 writes a SUBSCRIBE made while its socket connects ahead of the ready check's INFO;
// the server refuses the INFO in subscriber mode, and the client fails both (ioredis#2037).
const KEYS = 60;

/**
 * Waiters on `KEYS` busy keys, one every 0.3 ms from the first, so that some arrive while the
 * subscriber connection connects; each key is then freed, and every waiter must get its lock.
 */
async function waitersWhileConnecting(
  engine: LockEngine,
  busy: (key: string) => Promise<unknown>,
  free: (key: string) => Promise<unknown>,
): Promise<(string | undefined)[]> {
  const keys = Array.from({ length: KEYS }, (_, i) => `busy:{${i}}`);
  for (const key of keys) await busy(`lock:${key}`);
  await (await engine.acquire('warm-up')).release();
  const waits = [];
  for (const key of keys) {
    waits.push(outcome(engine.acquire(key, { wait: 5_000 })));
    await new Promise((resolve) => setTimeout(resolve, 0.3));
  }
  for (const key of keys) await free(`lock:${key}`);
  const results = await Promise.all(waits);
  return results.map(({ error }) => (error as Error | undefined)?.message);
}

describe('the subscriber connection, as it connects, takes every waiter', () => {
  const redis = useRedisServer();

  it('on a server', async () => {
    const engine = createLockEngine({ redis: redis.server.url, shutdownTimeout: 0 });
    try {
      const errors = await waitersWhileConnecting(
        engine,
        (key) => redis.probe.set(key, 'other', 'PX', 60_000),
        (key) => redis.probe.del(key),
      );
      expect(errors).toEqual(Array(KEYS).fill(undefined));
    } finally {
      await engine.close();
    }
  });

  it('on a cluster', async () => {
    const cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 0 });
    const [probe, client] = [cluster.client(), cluster.client()];
    const engine = createLockEngine({ redis: client, shutdownTimeout: 0 });
    try {
      const errors = await waitersWhileConnecting(
        engine,
        (key) => probe.set(key, 'other', 'PX', 60_000),
        (key) => probe.del(key),
      );
      expect(errors).toEqual(Array(KEYS).fill(undefined));
    } finally {
      await engine.close();
      probe.disconnect();
      client.disconnect();
      await cluster.stop();
    }
  }, 60_000);
});
