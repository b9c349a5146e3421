import { monitorEventLoopDelay } from 'node:perf_hooks';
import { libraryLocker, releaseAll, takeAll } from './bulk-lockers.js';
import { openCommandWindow, total } from './command-counter.js';
import type { ScenarioContext } from './context.js';
import { heapUsed } from './heap.js';
import { openSlowLog } from './slow-log.js';
import { sleep } from './stats.js';
import { BenchWorker } from './worker-pool.js';

export const SCALE_TTL_MS = 3_000;
export const BULK_CONCURRENCY = 500;
/** The neighbour sends one PING this often. */
const PING_EVERY_MS = 5;
/** A command that holds Redis this long or longer is over budget (SLOWLOG, µs). */
export const COMMAND_BUDGET_US = 2_000;

/**
 * Many locks held by one process and renewed every second for a while, with the costs that fall
 * on others: how long any one command holds Redis, a neighbour's PING round trip, this
 * process's event-loop lag, and the heap and Redis memory the locks take.
 */
export async function holdAtScale(context: ScenarioContext) {
  const { target, options } = context;
  const { scaleLocks: count, scaleHoldMs: holdMs } = options.durations;
  await target.admin.flushall();
  const neighbour = new BenchWorker('neighbour', 'neighbour-ping.ts');
  const locker = await libraryLocker(target.url);
  try {
    const before = await heapUsed();
    const memoryBefore = await usedMemory(context);
    const taken = await takeAll(locker, 'scale', count, SCALE_TTL_MS, BULK_CONCURRENCY);
    const held = await heapUsed();
    const memoryHeld = await usedMemory(context);
    neighbour.send({ type: 'start', url: target.url, everyMs: PING_EVERY_MS });
    await neighbour.next('started', 10_000);
    const closeSlowLog = await openSlowLog(target.admin, COMMAND_BUDGET_US);
    const closeCommands = await openCommandWindow(target.admin);
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    await sleep(holdMs);
    lag.disable();
    const commands = await closeCommands();
    const slow = await closeSlowLog();
    context.log(`  slowest command while held: ${slow.slowest}, ${slow.slowestUs} µs`);
    neighbour.send({ type: 'stop' });
    const pings = await neighbour.next('pings', 10_000);
    const end = await heapUsed();
    const lost = locker.lost();
    const releasePerSec = await releaseAll(taken.releases, BULK_CONCURRENCY);
    // Only renewal runs in the window, and each renewal of a lease is one PEXPIRE.
    const rounds = Math.round((commands.server.pexpire ?? 0) / count);
    return {
      acquirePerSec: taken.perSec,
      releasePerSec,
      commandsOver2ms: slow.over,
      slowestCommandUs: slow.slowestUs,
      lagP99: lag.percentile(99) / 1e6,
      lagMax: lag.max / 1e6,
      heapPerLockB: (held - before) / count,
      heapGrowthPerLockB: (end - held) / count,
      redisPerLockB: (memoryHeld - memoryBefore) / count,
      callsPerRound: rounds > 0 ? total(commands.client) / rounds : NaN,
      rounds,
      pingP50: Number(pings.p50),
      pingP99: Number(pings.p99),
      pingMax: Number(pings.max),
      lost,
    };
  } finally {
    await locker.close();
    await neighbour.stop();
  }
}

async function usedMemory({ target }: ScenarioContext): Promise<number> {
  const info = await target.admin.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}
