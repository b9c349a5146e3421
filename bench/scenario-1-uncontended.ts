import { openCommandWindow, total } from './command-counter.js';
import type { Contender } from './contenders/index.js';
import { freshKey, withWarmContenders, type ScenarioContext } from './context.js';
import { runCell, withPairedRatio, type CellResult, type ScenarioResult } from './results.js';
import { spread } from './stats.js';

const CONCURRENCY = [1, 8, 64];
// The library's defaults; no key is ever busy here, so the wait only matters to the API path.
const TTL = 30_000;
const WAIT = 10_000;

/**
 * Uncontended: C workers each take and release their own fresh keys back to back. Measures the
 * fixed cost of a lock (two round trips at best) and how well a client pipelines under load.
 */
export async function runUncontended(context: ScenarioContext): Promise<ScenarioResult> {
  const { options, log } = context;
  const cells: CellResult[] = [];
  await withWarmContenders(context, 'defaults', async (contenders) => {
    for (const workers of CONCURRENCY) {
      const cell = await runCell(
        `C=${workers}`,
        { workers },
        contenders,
        options.reps[1],
        (contender) => measure(context, contender, workers),
        log,
      );
      cells.push(withPairedRatio(cell, 'raw', 'cyclesPerSec', 'ratioToRaw'));
    }
  });
  return {
    id: 1,
    title: 'Uncontended acquire + release on distinct keys',
    cells,
    notes: [
      `${options.reps[1]} interleaved repetitions of ${options.durations.uncontendedMs} ms per contender and cell; ttl ${TTL} ms; default settings.`,
      '× raw: median of the per-repetition ratios to raw (runs of one repetition are adjacent); min–max show the noise. redis-semaphore sends the same two commands as raw, so its ratio is a gauge of that noise.',
    ],
  };
}

async function measure(context: ScenarioContext, contender: Contender, workers: number) {
  const { target, options } = context;
  const prefix = freshKey(`u:${contender.name}`);
  const latencies: number[] = [];
  const closeWindow = await openCommandWindow(target.admin);
  const started = performance.now();
  const deadline = started + options.durations.uncontendedMs;
  const worker = async (index: number): Promise<void> => {
    for (let n = 0; performance.now() < deadline; n++) {
      const begin = performance.now();
      const held = await contender.acquire(`${prefix}:${index}:${n}`, { ttl: TTL, wait: WAIT });
      if (!held) throw new Error(`${contender.name}: a fresh key was busy`);
      await held.release();
      latencies.push(performance.now() - begin);
    }
  };
  await Promise.all(Array.from({ length: workers }, (_, index) => worker(index)));
  const elapsed = performance.now() - started;
  const commands = await closeWindow();
  const { p50, p99 } = spread(latencies);
  return {
    figures: {
      cyclesPerSec: latencies.length / (elapsed / 1000),
      p50,
      p99,
      cmdsPerCycle: total(commands.server) / latencies.length,
      topLevelPerCycle: total(commands.client) / latencies.length,
    },
  };
}
