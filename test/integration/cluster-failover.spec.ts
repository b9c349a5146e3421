import type { Cluster } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockBusyError, LockStoreError } from '../../lib/errors/lock.errors.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import { reportFigures } from '../harness/figures.js';
import { countOverlaps } from '../harness/intervals.js';
import { RedisCluster } from '../harness/redis-cluster.js';
import { outcome, sleep, waitUntil } from '../harness/waits.js';
import { realProcess } from '../harness/real-process.js';

const HOT = '{hot}:stock';
const HOT_KEY = `lock:${HOT}`;
const STORE_TIMEOUT = 1_000;
const TTL = 2_000;
// Longer than the longest chain of unanswered calls a queued waiter can sit behind (an attempt
// in flight, then its own subscribe and attempt), so that a busy error in the workload can
// only come from a holder. The test after it looks at a shorter wait on purpose.
const WAIT = 4 * STORE_TIMEOUT;
const ENGINES = 4;
const LOOPS_PER_ENGINE = 2;

/** A critical section that completed: [enter, exit] and whether its release was confirmed. */
interface Hold {
  readonly enter: number;
  readonly exit: number;
  readonly released: boolean;
}

interface Failure {
  readonly error: unknown;
  readonly startedAt: number;
  readonly at: number;
}

/** Loops that contend for HOT through several engines until stopped, recording everything. */
class Contention {
  readonly holds: Hold[] = [];
  readonly failures: Failure[] = [];
  /** Read-yield-write increments: only exclusive sections keep it equal to `holds.length`. */
  counter = 0;
  private running = true;
  private readonly loops: Promise<void>[];

  constructor(engines: readonly LockEngine[]) {
    this.loops = engines.flatMap((engine) =>
      Array.from({ length: LOOPS_PER_ENGINE }, () => this.loop(engine)),
    );
  }

  successesAfter(time: number): Hold[] {
    return this.holds.filter((hold) => hold.enter > time);
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async loop(engine: LockEngine): Promise<void> {
    while (this.running) {
      const startedAt = performance.now();
      const attempt = await outcome(engine.acquire(HOT, { ttl: TTL, wait: WAIT }));
      if (!attempt.value) {
        this.failures.push({ error: attempt.error, startedAt, at: attempt.at });
        await sleep(20);
        continue;
      }
      const enter = performance.now();
      const value = this.counter;
      await new Promise(setImmediate);
      this.counter = value + 1;
      await sleep(1);
      const exit = performance.now();
      const result = await outcome(attempt.value.release());
      this.holds.push({ enter, exit, released: result.value === 'released' });
    }
  }
}

/** Two turns of the event loop: Node reports unhandled rejections after the microtasks drain. */
async function afterRejectionChecks(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('a Redis Cluster master crash under contention', () => {
  let cluster: RedisCluster;
  const clients: Cluster[] = [];
  const engines: LockEngine[] = [];
  const contentions: Contention[] = [];
  const escaped: unknown[] = [];
  const record = (error: unknown): void => void escaped.push(error);

  /** An engine on its own cluster client, as one app process would have. */
  function engine(): LockEngine {
    const client = cluster.client();
    clients.push(client);
    const created = createLockEngine({ redis: client, storeTimeout: STORE_TIMEOUT });
    engines.push(created);
    return created;
  }

  beforeAll(async () => {
    cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 1 });
    realProcess.on('unhandledRejection', record);
    realProcess.on('uncaughtException', record);
  }, 30_000);

  afterEach(async () => {
    // A failed test leaves its loops running: closed engines make them fail fast, then stop.
    const stopped = contentions.splice(0).map((contention) => contention.stop());
    await Promise.all(engines.splice(0).map((created) => created.close()));
    await Promise.all(stopped);
    for (const client of clients.splice(0)) client.disconnect();
    await afterRejectionChecks();
    expect(escaped).toEqual([]);
  });

  afterAll(async () => {
    realProcess.off('unhandledRejection', record);
    realProcess.off('uncaughtException', record);
    await cluster?.stop();
  });

  it('resumes within 5 s of the promotion, never overlapping, failing meanwhile only with LockStoreError', async () => {
    const contention = new Contention(Array.from({ length: ENGINES }, engine));
    contentions.push(contention);
    await waitUntil('the workload to run', () => contention.holds.length >= 30, 10_000);
    const victim = await cluster.masterForKey(HOT_KEY);

    await cluster.kill(victim.port);
    const killedAt = performance.now();
    const failover = await cluster.waitForFailover(HOT_KEY, 15_000);
    const promotedAt = performance.now();
    const resumed = await waitUntil(
      'a lock granted after the promotion',
      () => contention.successesAfter(promotedAt)[0],
      15_000,
    );
    // Some more hand-offs on the promoted master, so its steady state is checked too.
    const settled = contention.successesAfter(promotedAt).length + 30;
    await waitUntil('the workload to go on', () => contention.holds.length >= settled, 10_000);
    await contention.stop();

    const { holds, failures } = contention;
    const resumeMs = resumed.enter - promotedAt;
    const overlaps = countOverlaps(
      holds.map(({ enter, exit }) => [
        BigInt(Math.round(enter * 1e3)),
        BigInt(Math.round(exit * 1e3)),
      ]),
    );
    const busy = failures.filter(({ error }) => error instanceof LockBusyError);
    // Where the key may have been held: each section until its release, or until its lease ran
    // out when the release went unconfirmed; and an acquire the crash may have cut off.
    const heldWindows = [
      ...holds.map(({ enter, exit, released }) => [enter, released ? exit : enter + TTL]),
      [killedAt, killedAt + TTL],
    ];
    const unexplainedBusy = busy.filter(({ startedAt, at }) =>
      heldWindows.every(([from, to]) => to! < startedAt || from! > at),
    );
    reportFigures('cluster failover', {
      failoverMs: Math.round(failover.elapsedMs),
      resumeMs: Number(resumeMs.toFixed(1)),
      firstGrantAfterKillMs: Math.round(contention.successesAfter(killedAt)[0]!.enter - killedAt),
      sections: holds.length,
      storeErrors: failures.filter(({ error }) => error instanceof LockStoreError).length,
      busy: busy.length,
    });
    expect(failover.master.port).not.toBe(victim.port);
    expect(resumeMs).toBeLessThan(5_000);
    expect(overlaps).toBe(0);
    expect(contention.counter).toBe(holds.length);
    // The crash was felt, and only as store errors (or busy while someone held the lock).
    expect(failures.length).toBeGreaterThan(0);
    const otherErrors = failures.filter(
      ({ error }) => !(error instanceof LockStoreError || error instanceof LockBusyError),
    );
    expect(otherErrors.map(({ error }) => String(error))).toEqual([]);
    expect(unexplainedBusy.map(({ error }) => String(error))).toEqual([]);
  }, 45_000);

  it('fails a queued acquire with LockStoreError, not LockBusyError, when its wait ends while the slot has no master', async () => {
    const probe = '{probe}:x';
    const locks = engine();
    // Connected, slot map known, and nobody holds the key.
    await (await locks.acquire(probe)).release();
    const victim = await cluster.masterForKey(`lock:${probe}`);

    await cluster.kill(victim.port);
    // The first goes straight to the store, which does not answer; the second queues behind it
    // and its wait (shorter than the store timeout) runs out first.
    const first = outcome(locks.acquire(probe, { wait: 300 }));
    const second = outcome(locks.acquire(probe, { wait: 300 }));
    const results = [await first, await second];

    expect(results.map(({ error }) => error)).toEqual([
      expect.any(LockStoreError),
      expect.any(LockStoreError),
    ]);
  }, 15_000);
});
