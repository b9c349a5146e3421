import type { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { FENCE_GRACE } from '../../lib/stores/redis/scripts/lua-helpers.js';
import { reportFigures } from '../harness/figures.js';
import { RedisServer } from '../harness/redis-server.js';
import { createTestEngine } from '../harness/test-engine.js';
import { useRedisServer } from '../harness/use-redis.js';
import { waitUntil } from '../harness/waits.js';

const redis = useRedisServer();
const engines: LockEngine[] = [];

function engineOn(client: Redis): LockEngine {
  const created = createTestEngine(client);
  engines.push(created);
  return created;
}

/** Takes and releases a fenced lock on `key` `times` times; the fences, in order. */
async function fences(locks: LockEngine, key: string, times = 1): Promise<number[]> {
  const taken: number[] = [];
  for (let i = 0; i < times; i++) {
    const lock = await locks.acquire(key, { fencing: true });
    taken.push(lock.fence!);
    await lock.release();
  }
  return taken;
}

afterEach(async () => {
  await Promise.all(engines.splice(0).map((created) => created.close()));
  await redis.probe.flushall();
});

describe('fences', () => {
  it('keep increasing across a Redis restart without persistence', async () => {
    const locks = engineOn(redis.client);
    const before = await fences(locks, 'stock:1', 5);

    await redis.server.restart();
    await waitUntil('the client to reconnect', async () => redis.client.status === 'ready');
    const after = await fences(locks, 'stock:1', 2);

    reportFigures('fences across a restart', { before, after });
    expect([...before, ...after]).toEqual([...before, ...after].sort((a, b) => a - b));
    expect(new Set([...before, ...after]).size).toBe(7);
    expect(after[0]).toBeGreaterThan(before.at(-1)!);
  });

  it('keep increasing on a replica promoted without the latest counter', async () => {
    const replica = await RedisServer.start([
      '--replicaof',
      '127.0.0.1',
      String(redis.server.port),
    ]);
    const onReplica = replica.client();
    try {
      await waitUntil('the replica to sync', async () =>
        /master_link_status:up/.test(await onReplica.info('replication')),
      );
      const locks = engineOn(redis.client);
      const replicated = await fences(locks, 'stock:2', 2);
      await waitUntil(
        'the counter to reach the replica',
        async () => (await onReplica.exists('{lock:stock:2}\x1ffence')) === 1,
      );
      // Promoted now: the fences the old master issues next never reach it.
      await onReplica.replicaof('NO', 'ONE');
      const lost = await fences(locks, 'stock:2', 3);

      const promoted = await fences(engineOn(onReplica), 'stock:2');

      reportFigures('fences across a failover', { replicated, lost, promoted });
      expect(promoted[0]).toBeGreaterThan(lost.at(-1)!);
    } finally {
      onReplica.disconnect();
      await replica.stop();
    }
  });

  it('leave no counter behind once the lease and the grace have passed (100,000 keys)', async () => {
    const locks = engineOn(redis.client);
    const keys = 100_000;
    // Long enough that a loaded CI's stall does not make a grant late (a 1 s lease once was).
    const ttl = 2_500;
    const batch = 500;
    for (let start = 0; start < keys; start += batch) {
      const taken = Array.from({ length: batch }, (_, i) =>
        locks.acquire(`unique:${start + i}`, { ttl, fencing: true }),
      );
      await Promise.all((await Promise.all(taken)).map((lock) => lock.release()));
    }
    const lastAcquired = performance.now();
    // The lock keys are gone with their release; the last counters are still there.
    expect(await redis.probe.exists(`lock:unique:${keys - 1}`)).toBe(0);
    expect(await redis.probe.exists(`{lock:unique:${keys - 1}}\x1ffence`)).toBe(1);

    // Redis deletes expired keys in the background a little after they expire.
    const left = await waitUntil(
      'every counter to expire',
      async () => (await redis.probe.dbsize()) === 0 && 'none',
      ttl + FENCE_GRACE + 10_000,
      250,
    );
    const goneAfterMs = performance.now() - lastAcquired;

    reportFigures('fence counters of 100,000 keys', { left, goneAfterMs: Math.round(goneAfterMs) });
    expect(goneAfterMs).toBeGreaterThan(ttl + FENCE_GRACE - 1_000);
  }, 90_000);
});
