import { ChildWorker, killLiveWorkers } from '../harness/child-workers.js';
import { reportFigures } from '../harness/figures.js';
import { countOverlaps, fromWire } from '../harness/intervals.js';
import { useRedisServer } from '../harness/use-redis.js';
import type {
  ShutdownWorkerConfig,
  ShutdownWorkerResult,
} from '../fixtures/shutdown-app/shutdown-worker.js';

const SPAWN_TIMEOUT = 20_000;
const CLEANUP_MS = 400;

/**
 * Two app processes share one key: the holder's job is inside the lock when its app closes, and
 * goes on for `CLEANUP_MS` after its signal aborts; the contender tries for the key all along.
 */
async function closeWhileHolding(port: number, key: string, releaseAtClose: boolean) {
  const common = { port, key, cleanupMs: CLEANUP_MS, releaseAtClose };
  const holder = spawn({ ...common, role: 'holder' }, 'holder');
  const contender = spawn({ ...common, role: 'contender' }, 'contender');
  await contender.next('ready', SPAWN_TIMEOUT);
  await holder.next('ready', SPAWN_TIMEOUT);
  holder.send({ type: 'start' });
  await holder.next('inside', SPAWN_TIMEOUT);
  contender.send({ type: 'start' });
  await contender.next('contending', SPAWN_TIMEOUT);

  holder.send({ type: 'close' });
  const held = (await holder.next('result', SPAWN_TIMEOUT)).value as ShutdownWorkerResult;
  // The job has ended: the contender gets the key now.
  await contender.next('section', SPAWN_TIMEOUT);
  contender.send({ type: 'stop' });
  const contended = (await contender.next('result', SPAWN_TIMEOUT)).value as ShutdownWorkerResult;
  const [section] = held.intervals.map(fromWire);
  const after = contended.intervals.map(fromWire);
  return {
    held,
    overlaps: countOverlaps([section!, ...after]),
    contenderSectionsAfter: after.filter(([enter]) => enter > section![1]).length,
  };
}

function spawn(config: ShutdownWorkerConfig, name: string): ChildWorker {
  return ChildWorker.spawn('shutdown-app/shutdown-worker', config, name);
}

describe('app.close() while a decorated job holds a lock another process wants', () => {
  const redis = useRedisServer({ clients: false, beforeStop: killLiveWorkers });

  it("aborts the job's signal at once, and frees the lock only when the job ends", async () => {
    const { held, overlaps, contenderSectionsAfter } = await closeWhileHolding(
      redis.server.port,
      'shutdown:safe',
      false,
    );

    reportFigures('shutdown', {
      abortAfterMs: Number(held.abortAfterMs!.toFixed(2)),
      closedAfterMs: Math.round(held.closedAfterMs!),
    });
    expect(overlaps).toBe(0);
    // Released by the job as it ended, not left to expire.
    expect(held.releases).toEqual(['released']);
    // The contender did get the key, once the job had ended.
    expect(contenderSectionsAfter).toBeGreaterThan(0);
    expect(held.abortAfterMs).toBeLessThan(CLEANUP_MS);
    expect(held.closedAfterMs).toBeGreaterThanOrEqual(CLEANUP_MS - 5);
  }, 60_000);

  it('canary: freeing the lock when the app starts closing lets the other process in mid-job', async () => {
    const { overlaps } = await closeWhileHolding(redis.server.port, 'shutdown:unsafe', true);

    expect(overlaps).toBeGreaterThan(0);
  }, 60_000);
});
