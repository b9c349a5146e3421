import { killLiveWorkers, runWorkers } from '../harness/child-workers.js';
import { reportFigures } from '../harness/figures.js';
import { countOverlaps, fromWire } from '../harness/intervals.js';
import { useRedisServer } from '../harness/use-redis.js';
import type { MutexWorkerConfig, MutexWorkerResult } from '../fixtures/mutex-worker.js';

const PROCESSES = 3;
const LOOPS_PER_PROCESS = 8;
const ITERATIONS = 300; // per loop: 3 × 8 × 300 = 7200 critical sections

/** How often consecutive sections (by entry time) come from different processes. */
function turns(results: readonly MutexWorkerResult[]): number {
  const entries = results
    .flatMap((result, process) =>
      result.intervals.map(([enter]) => ({ at: BigInt(enter), process })),
    )
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return entries.filter((entry, i) => i > 0 && entry.process !== entries[i - 1].process).length;
}

describe('mutual exclusion across processes', () => {
  const redis = useRedisServer({ beforeStop: killLiveWorkers });

  /** Runs the increment workers in PROCESSES processes; returns the counter and the sections. */
  async function run(iterations: number, useLock: boolean) {
    const name = useLock ? 'locked' : 'unlocked';
    const config: MutexWorkerConfig = {
      port: redis.server.port,
      lockKey: `${name}:lock`,
      counterKey: `${name}:counter`,
      concurrency: LOOPS_PER_PROCESS,
      iterations,
      useLock,
    };
    const startedAt = performance.now();
    const configs = Array.from({ length: PROCESSES }, () => config);
    const results = await runWorkers<MutexWorkerResult>('mutex-worker', configs, 55_000);
    const seconds = (performance.now() - startedAt) / 1000;
    const intervals = results.flatMap((result) => result.intervals.map(fromWire));
    const counter = Number(await redis.client.get(config.counterKey));
    const figures = { counter, overlaps: countOverlaps(intervals), turns: turns(results) };
    reportFigures(useLock ? 'mutual exclusion' : 'control (no lock)', {
      sections: intervals.length,
      ...figures,
      seconds,
    });
    return { intervals, ...figures };
  }

  it('keeps 7200 read-yield-write increments on one key apart: no lost update, no overlap', async () => {
    const expected = PROCESSES * LOOPS_PER_PROCESS * ITERATIONS;

    const { counter, intervals, overlaps, turns } = await run(ITERATIONS, true);

    expect(intervals).toHaveLength(expected);
    expect(counter).toBe(expected);
    expect(overlaps).toBe(0);
    // The lock went back and forth between processes, not just within each one.
    expect(turns).toBeGreaterThan(0);
  }, 60_000);

  // Proves the checker can see a race: the same workers, without the lock, must trip it.
  it('control: the same workers without the lock overlap and lose updates', async () => {
    const iterations = 10;
    const expected = PROCESSES * LOOPS_PER_PROCESS * iterations;

    const { counter, intervals, overlaps } = await run(iterations, false);

    expect(intervals).toHaveLength(expected);
    expect(counter).toBeLessThan(expected);
    expect(overlaps).toBeGreaterThan(0);
  }, 60_000);
});
