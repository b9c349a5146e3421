import { openCommandWindow } from './command-counter.js';
import { openConnection, pingOf } from './contenders/client-connections.js';
import type { Contender } from './contenders/index.js';
import { freshKey, withWarmContenders, type ScenarioContext } from './context.js';
import { hotKeyFigures } from './hot-key-figures.js';
import { runHotKeyLoop } from './hot-key-loop.js';
import { measureRtt } from './redis-target.js';
import { runCell, type CellResult, type ScenarioResult } from './results.js';

const WORKERS = [2, 16, 64];
const CRITICAL_SECTION_MS = [0, 1];
const TTL = 30_000;

/**
 * One hot key, W workers in this process, each looping acquire → section → release; the locks
 * of each client library in cells of their own.
 */
export async function runHotKey(context: ScenarioContext): Promise<ScenarioResult> {
  const { options, log } = context;
  const cells: CellResult[] = [];
  for (const client of options.clients) {
    // The round trip of the theoretical maximum is the cell's client's own.
    const probe = await openConnection(client, context.target.url);
    const ping = pingOf(probe);
    const run = async (contenders: Contender[]): Promise<void> => {
      for (const csMs of CRITICAL_SECTION_MS) {
        for (const workers of WORKERS) {
          const cell = await runCell(
            `W=${workers} cs=${csMs}ms ${client}`,
            { workers, csMs },
            contenders,
            options.reps[2],
            (contender) => measure(context, contender, workers, csMs, ping),
            log,
          );
          cells.push({ ...cell, client });
        }
      }
    };
    try {
      await withWarmContenders(context, 'hot-key', run, client);
    } finally {
      await probe.close();
    }
  }
  return {
    id: 2,
    title: 'Hot key, one process',
    cells,
    notes: [
      `${options.durations.hotKeyMs} ms per run; ttl ${TTL} ms; waiters aborted when the window closes.`,
      `Each client library's locks run in cells of their own (${options.clients.join(', ')}).`,
      "pctOfMax: locks/s over 1/(measured cs + PING RTT), the PING sent through the cell's client library (GLIDE's passes through its core, as its commands do). cmdsPerLock: INFO commandstats (script-internal commands included); topLevelPerLock: commands the clients sent.",
      'A cs of 0 ms enters and leaves in one tick, so in one process the overlap detector can only catch overlaps at cs 1 ms.',
      'cs ms is the measured time inside the section: a 1 ms timer that takes much longer means the machine was busy during that run.',
      'CPU µs/lock: CPU time of the bench process (all threads) and of the Redis server, over the locks.',
    ],
  };
}

async function measure(
  context: ScenarioContext,
  contender: Contender,
  workers: number,
  csMs: number,
  ping: () => Promise<unknown>,
) {
  const { target, options } = context;
  const rtt = await measureRtt(ping);
  const closeWindow = await openCommandWindow(target.admin, { countPings: true });
  const durationMs = options.durations.hotKeyMs;
  const key = freshKey(`hot:${contender.name}`);
  const result = await runHotKeyLoop(contender, { key, workers, csMs, durationMs, ttl: TTL });
  const commands = await closeWindow();
  return hotKeyFigures({ ...result, durationMs, rtt, commands });
}
