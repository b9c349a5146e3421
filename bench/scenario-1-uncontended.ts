import { openCommandWindow, total } from './command-counter.js';
import type { Contender } from './contenders/index.js';
import { freshKey, withWarmContenders, type ScenarioContext } from './context.js';
import {
  runSlicedCell,
  withPairedRatio,
  type CellResult,
  type RunOutcome,
  type ScenarioResult,
} from './results.js';
import { spread } from './stats.js';

const CONCURRENCY = [1, 8, 64];
// The library's defaults; no key is ever busy here, so the wait only matters to the API path.
const TTL = 30_000;
const WAIT = 10_000;
/**
 * Each repetition's time per contender is cut into this many slices, the contenders taking
 * turns: at C = 1 a cycle is two round trips, so the VM's swings of a few hundred ms moved the
 * ratio of one repetition's 500 ms runs anywhere from 0.7 to 1.2.
 */
const SLICES = 5;

/**
 * Uncontended: C workers each take and release their own fresh keys back to back. Measures the
 * fixed cost of a lock (two round trips at best) and how well a client pipelines under load.
 * The locks of each client library run in cells of their own, beside raw on that client.
 */
export async function runUncontended(context: ScenarioContext): Promise<ScenarioResult> {
  const { options, log } = context;
  const cells: CellResult[] = [];
  const slice = options.durations.uncontendedMs / SLICES;
  const plan = { reps: options.reps[1], slices: SLICES, finish: figuresOf };
  for (const client of options.clients) {
    const run = async (contenders: Contender[]): Promise<void> => {
      for (const workers of CONCURRENCY) {
        const cell = await runSlicedCell(
          `C=${workers} ${client}`,
          { workers },
          contenders,
          plan,
          (contender) => measure(context, contender, workers, slice),
          log,
        );
        cells.push({ ...withPairedRatio(cell, 'raw', 'cyclesPerSec', 'ratioToRaw'), client });
      }
    };
    await withWarmContenders(context, 'defaults', run, client, ['raw']);
  }
  return {
    id: 1,
    title: 'Uncontended acquire + release on distinct keys',
    cells,
    notes: [
      `${options.reps[1]} repetitions of ${options.durations.uncontendedMs} ms per contender and cell, each in ${SLICES} slices, the contenders taking turns; ttl ${TTL} ms; default settings.`,
      `Each client library's locks run in cells of their own (${options.clients.join(', ')}), one library after the other, beside raw on the same client.`,
      '× raw: median of the per-repetition ratios to the raw client of the same cell (runs of one repetition are adjacent); min–max show the noise. redis-semaphore sends the same two commands as raw, so its ratio is a gauge of that noise.',
      'CPU µs/cycle: CPU time of the bench process (all its threads, a client library’s own included) and of the Redis server, over the cycles.',
    ],
  };
}

/** One slice of a contender's repetition, as counted. */
interface Slice {
  readonly cycles: number;
  readonly elapsedMs: number;
  readonly latencies: readonly number[];
  readonly serverCommands: number;
  readonly clientCommands: number;
  readonly processCpuUs: number;
  readonly redisCpuUs: number;
}

async function measure(
  context: ScenarioContext,
  contender: Contender,
  workers: number,
  ms: number,
): Promise<Slice> {
  const { target } = context;
  const prefix = freshKey(`u:${contender.name}`);
  const latencies: number[] = [];
  const closeWindow = await openCommandWindow(target.admin, { countPings: true });
  const started = performance.now();
  const deadline = started + ms;
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
  const elapsedMs = performance.now() - started;
  const { server, client, cpu } = await closeWindow();
  return {
    cycles: latencies.length,
    elapsedMs,
    latencies,
    serverCommands: total(server),
    clientCommands: total(client),
    processCpuUs: cpu.processUs,
    redisCpuUs: cpu.redisUs,
  };
}

/** A repetition's figures from its slices: rates over their summed time, latencies pooled. */
function figuresOf(slices: Slice[]): RunOutcome {
  const sum = (pick: (slice: Slice) => number): number =>
    slices.reduce((acc, slice) => acc + pick(slice), 0);
  const cycles = sum((slice) => slice.cycles);
  const { p50, p99 } = spread(slices.flatMap((slice) => slice.latencies));
  return {
    figures: {
      cyclesPerSec: cycles / (sum((slice) => slice.elapsedMs) / 1000),
      p50,
      p99,
      cmdsPerCycle: sum((slice) => slice.serverCommands) / cycles,
      topLevelPerCycle: sum((slice) => slice.clientCommands) / cycles,
      cpuUsPerCycle: sum((slice) => slice.processCpuUs) / cycles,
      redisCpuUsPerCycle: sum((slice) => slice.redisCpuUs) / cycles,
    },
  };
}
