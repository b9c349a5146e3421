import { fencedWrite } from '../../lib/index.js';
import { ChildWorker, killLiveWorkers, type WorkerMessage } from '../harness/child-workers.js';
import { reportFigures } from '../harness/figures.js';
import { useRedisServer, useTestEngine } from '../harness/use-redis.js';
import { waitUntil } from '../harness/waits.js';
import type { FencedWriterConfig } from '../fixtures/chaos-fenced-writer.js';
import { CHAOS, timeoutFor } from '../harness/chaos-profile.js';

const TTL = 500;
const SPAWN_TIMEOUT = 15_000;

interface PauseRun {
  readonly staleFence: number;
  readonly freshFence: number;
  /** What the stopped holder's write did, once resumed: 'written' or an error name. */
  readonly outcome: string;
  readonly lockLostBeforeWrite: boolean;
  readonly resource: string | null;
  readonly newestFence: string | null;
  readonly stoppedMs: number;
}

describe('a fenced holder stopped (SIGSTOP) past its lease, then resumed to write', () => {
  const redis = useRedisServer({ beforeStop: killLiveWorkers });
  const fixture = useTestEngine(redis);

  /** The newer holder: this test, taking the lock the stopped worker lost, and writing. */
  async function writeAsNewHolder(config: FencedWriterConfig): Promise<number> {
    const lock = await fixture.engine.acquire(config.lockKey, { ttl: 5_000, fencing: true });
    await fencedWrite(redis.client, {
      fence: lock.fence,
      fenceKey: config.fenceKey,
      writes: [['SET', config.resourceKey, `fresh:${lock.fence}`]],
    });
    expect(await lock.release()).toBe('released');
    return lock.fence!;
  }

  /** Stops the worker inside its critical section until a newer holder has written. */
  async function pausedWriter(name: string, write: FencedWriterConfig['write']): Promise<PauseRun> {
    const config: FencedWriterConfig = {
      port: redis.server.port,
      lockKey: name,
      resourceKey: `resource:{${name}}`,
      fenceKey: `resource:{${name}}:fence`,
      ttl: TTL,
      write,
    };
    await redis.probe.set(config.resourceKey, 'initial');
    const worker = ChildWorker.spawn('chaos-fenced-writer', config, `writer ${name}`);
    const read = await worker.next('read', SPAWN_TIMEOUT);
    expect(read.seen).toBe('initial');

    process.kill(worker.pid!, 'SIGSTOP');
    const stoppedAt = performance.now();
    let freshFence: number;
    try {
      // Stopped, it cannot renew: its key goes when the lease runs out.
      await waitUntil(
        "the stopped holder's lease to run out",
        async () => (await redis.probe.exists(`lock:${name}`)) === 0,
        TTL * 4,
        5,
      );
      freshFence = await writeAsNewHolder(config);
    } finally {
      process.kill(worker.pid!, 'SIGCONT');
    }
    const stoppedMs = performance.now() - stoppedAt;
    worker.send({ type: 'write' });
    const wrote = await worker.next<WorkerMessage & { outcome: string; lockLost: boolean }>(
      'wrote',
      5_000,
    );
    await worker.stop();
    return {
      staleFence: read.fence as number,
      freshFence,
      outcome: wrote.outcome,
      lockLostBeforeWrite: wrote.lockLost,
      resource: await redis.probe.get(config.resourceKey),
      newestFence: await redis.probe.get(config.fenceKey),
      stoppedMs,
    };
  }

  it(
    'refuses the stale write (StaleFenceError): the newer holder’s write stays',
    async () => {
      for (let round = 0; round < CHAOS.rounds; round++) {
        const run = await pausedWriter(`fenced:${round}`, 'fenced');

        reportFigures('fenced pause', { ...run });
        expect(run.freshFence).toBeGreaterThan(run.staleFence);
        expect(run.outcome).toBe('StaleFenceError');
        expect(run.resource).toBe(`fresh:${run.freshFence}`);
        expect(run.newestFence).toBe(String(run.freshFence));
      }
    },
    timeoutFor(SPAWN_TIMEOUT + 4 * TTL),
  );

  // Canary: the same pause with a plain SET lets the stale holder overwrite the newer write.
  it(
    'canary: a plain SET from the stopped holder overwrites the newer holder’s write',
    async () => {
      const run = await pausedWriter('plain', 'plain');

      reportFigures('fenced pause canary (plain SET)', { ...run });
      expect(run.freshFence).toBeGreaterThan(run.staleFence);
      expect(run.outcome).toBe('written');
      expect(run.resource).toBe(`stale:${run.staleFence}`);
    },
    SPAWN_TIMEOUT + 10_000,
  );
});
