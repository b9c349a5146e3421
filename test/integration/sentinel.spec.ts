import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockBusyError, LockStoreError } from '../../lib/errors/lock.errors.js';
import type { LockModuleOptions } from '../../lib/nest/interfaces/lock-module-options.interface.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import { reportFigures } from '../harness/figures.js';
import { adminCall, infoOf } from '../harness/redis-admin.js';
import { RedisSentinelSet } from '../harness/redis-sentinel.js';
import { sentinelReady } from '../harness/sentinel-queries.js';
import { errorOf, outcome, waitUntil } from '../harness/waits.js';

describe('locks on a Sentinel-managed master (1 replica, 3 sentinels)', () => {
  let set: RedisSentinelSet;
  const engines: LockEngine[] = [];

  /** An engine that connects through the sentinels, as `LockModule.forRoot(options)` would. */
  async function engine(options: Partial<LockModuleOptions> = {}): Promise<LockEngine> {
    const created = createLockEngine({
      redis: { sentinels: set.sentinels, name: set.masterName },
      storeTimeout: 1_000,
      ...options,
    });
    engines.push(created);
    await created.init();
    return created;
  }

  beforeAll(async () => {
    set = await RedisSentinelSet.start({ replicas: 1, sentinels: 3 });
  }, 30_000);

  afterEach(async () => {
    await Promise.all(engines.splice(0).map((created) => created.close()));
  });

  afterAll(async () => {
    await set?.stop();
  });

  it('acquires with replicas: { count: 1 } once the replica has the key', async () => {
    const locks = await engine({ replicas: { count: 1, timeout: 1_000 } });

    const lock = await locks.acquire('order:1', { ttl: 10_000 });

    // WAIT said the replica has it: read it there, without a client that could wait for it.
    expect(await adminCall(set.replica.port, ['GET', 'lock:order:1'])).toBe(lock.token);
    expect(await lock.release()).toBe('released');
  });

  it('refuses the lock with LockStoreError about replicas, and leaves no key, while the replica is down', async () => {
    const locks = await engine({ replicas: { count: 1, timeout: 100 } });
    await set.stopReplica();
    try {
      const error = await errorOf(() => locks.acquire('order:2', { ttl: 10_000, wait: 2_000 }));

      expect(error).toBeInstanceOf(LockStoreError);
      expect((error as Error).message).toMatch(
        /only 0 of the 1 required replicas acknowledged the lock within 100 ms/,
      );
      expect(await adminCall(set.master.port, ['EXISTS', 'lock:order:2'])).toBe(0);
      expect(locks.heldCount).toBe(0);
    } finally {
      await set.startReplica();
      // Linked and seen healthy by every sentinel again, so the failover below can promote it.
      const ready = () =>
        Promise.all(
          set.sentinels.map(({ port }) => sentinelReady(port, set.masterName, [set.replica.port])),
        );
      await waitUntil('the replica to be back', async () => (await ready()).every(Boolean), 15_000);
    }
  }, 25_000);

  it('keeps locking through the sentinel-mode client after the master is killed and the replica promoted', async () => {
    const locks = await engine();
    await (await locks.acquire('order:3')).release();

    await set.killMaster();
    const failover = await set.waitForFailover(20_000);
    const promotedAt = performance.now();
    // The client finds the new master on its own; until then, calls fail as store errors.
    const failures: unknown[] = [];
    const lock = await waitUntil(
      'a lock from the promoted master',
      async () => {
        const attempt = await outcome(locks.acquire('order:3', { ttl: 10_000, wait: 0 }));
        if (attempt.error) failures.push(attempt.error);
        return attempt.value;
      },
      10_000,
      50,
    );
    const resumeMs = performance.now() - promotedAt;

    reportFigures('sentinel failover', {
      failoverMs: Math.round(failover.elapsedMs),
      resumeMs: Math.round(resumeMs),
      failedCalls: failures.map((error) => (error as Error).name),
    });
    expect(failover.master.port).toBe(set.replica.port);
    // Busy is possible: an attempt that timed out while the client was reconnecting can still
    // run on the new master from ioredis' offline queue, and hold the key until it is given back.
    const unexpected = failures.filter(
      (error) => !(error instanceof LockStoreError || error instanceof LockBusyError),
    );
    expect(unexpected).toEqual([]);
    expect(await adminCall(failover.master.port, ['GET', 'lock:order:3'])).toBe(lock.token);
    expect((await infoOf(failover.master.port, 'replication'))?.role).toBe('master');
    expect(await lock.release()).toBe('released');
    expect(await adminCall(failover.master.port, ['EXISTS', 'lock:order:3'])).toBe(0);
  }, 40_000);
});
