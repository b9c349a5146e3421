import { openCommandWindow } from './command-counter.js';
import type { Contender } from './contenders/index.js';
import { freshKey, withWarmContenders, type ScenarioContext } from './context.js';
import { hotKeyFigures } from './hot-key-figures.js';
import { runHotKeyLoop } from './hot-key-loop.js';
import { measureRtt } from './redis-target.js';
import { runCell, type CellResult, type ScenarioResult } from './results.js';

const WORKERS = [2, 16, 64];
const CRITICAL_SECTION_MS = [0, 1];
const TTL = 30_000;

/** One hot key, W workers in this process, each looping acquire → section → release. */
export async function runHotKey(context: ScenarioContext): Promise<ScenarioResult> {
  const { options, log } = context;
  const cells: CellResult[] = [];
  await withWarmContenders(context, 'hot-key', async (contenders) => {
    for (const csMs of CRITICAL_SECTION_MS) {
      for (const workers of WORKERS) {
        const cell = await runCell(
          `W=${workers} cs=${csMs}ms`,
          { workers, csMs },
          contenders,
          options.reps[2],
          (contender) => measure(context, contender, workers, csMs),
          log,
        );
        cells.push(cell);
      }
    }
  });
  return {
    id: 2,
    title: 'Hot key, one process',
    cells,
    notes: [
      `${options.durations.hotKeyMs} ms per run; ttl ${TTL} ms; waiters aborted when the window closes.`,
      'pctOfMax: locks/s over 1/(measured cs + PING RTT). cmdsPerLock: INFO commandstats (script-internal commands included); topLevelPerLock: commands the clients sent.',
      'A cs of 0 ms enters and leaves in one tick, so in one process the overlap detector can only catch overlaps at cs 1 ms.',
      'cs ms is the measured time inside the section: a 1 ms timer that takes much longer means the machine was busy during that run.',
    ],
  };
}

async function measure(
  context: ScenarioContext,
  contender: Contender,
  workers: number,
  csMs: number,
) {
  const { target, options } = context;
  const rtt = await measureRtt(target.admin);
  const closeWindow = await openCommandWindow(target.admin);
  const durationMs = options.durations.hotKeyMs;
  const key = freshKey(`hot:${contender.name}`);
  const result = await runHotKeyLoop(contender, { key, workers, csMs, durationMs, ttl: TTL });
  const commands = await closeWindow();
  return hotKeyFigures({ ...result, durationMs, rtt, commands });
}
