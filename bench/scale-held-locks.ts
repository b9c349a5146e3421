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
/** The neighbour sends one TIME this often, ... */
const PING_EVERY_MS = 5;
/** ... and first does so alone for this long. */
const NEIGHBOUR_ALONE_MS = 5_000;
/** A command that holds Redis this long or longer is over budget (SLOWLOG, µs). */
export const COMMAND_BUDGET_US = 2_000;

/**
 * Many locks held by one process and renewed every second for a while, with the costs that fall
 * on others: how long any one command holds Redis, a neighbour's PING round trip, this
 * process's event-loop lag, and the heap and Redis memory the locks take.
 */
export async function holdAtScale(context: ScenarioContext, ttl: number, holdMs: number) {
  const { target, options } = context;
  const count = options.durations.scaleLocks;
  await target.admin.flushall();
  const neighbour = new BenchWorker('neighbour', 'neighbour-ping.ts');
  const locker = await libraryLocker(target.url);
  try {
    const idle = await neighbourAlone(context, neighbour);
    const before = await heapUsed();
    const memoryBefore = await usedMemory(context);
    const taken = await takeAll(locker, 'scale', count, ttl, BULK_CONCURRENCY);
    const held = await heapUsed();
    const memoryHeld = await usedMemory(context);
    neighbour.send({ type: 'start', url: target.url, everyMs: PING_EVERY_MS });
    await neighbour.next('started', 10_000);
    const closeSlowLog = await openSlowLog(target.admin, COMMAND_BUDGET_US);
    const closeCommands = await openCommandWindow(target.admin);
    const lag = monitorEventLoopDelay({ resolution: 10 });
    const redisCpuBefore = await redisCpuSeconds(context);
    const cpuBefore = process.cpuUsage();
    lag.enable();
    await sleep(holdMs);
    lag.disable();
    const cpu = process.cpuUsage(cpuBefore);
    const redisCpu = (await redisCpuSeconds(context)) - redisCpuBefore;
    const commands = await closeCommands();
    const slow = await closeSlowLog();
    context.log(`  slowest command while held: ${slow.slowest}, ${slow.slowestUs} µs`);
    neighbour.send({ type: 'stop' });
    const pings = await neighbour.next('pings', 10_000);
    const end = await heapUsed();
    const lost = locker.lost();
    const releasePerSec = await releaseAll(taken.releases, BULK_CONCURRENCY);
    // Only renewal runs in the window, and each renewal of a lease is one PEXPIRE.
    const renewals = commands.server.pexpire ?? 0;
    const rounds = Math.round(renewals / count);
    return {
      acquirePerSec: taken.perSec,
      releasePerSec,
      commandsOver2ms: slow.over,
      slowestCommandUs: slow.slowestUs,
      stalls: slow.stalls,
      stealMs: slow.stealMs,
      lagP99: lag.percentile(99) / 1e6,
      lagMax: lag.max / 1e6,
      heapPerLockB: (held - before) / count,
      heapGrowthPerLockB: (end - held) / count,
      redisPerLockB: (memoryHeld - memoryBefore) / count,
      callsPerRound: rounds > 0 ? total(commands.client) / rounds : NaN,
      rounds,
      cpuPerRenewalUs: renewals > 0 ? (cpu.user + cpu.system) / renewals : NaN,
      cpuPct: ((cpu.user + cpu.system) / 1000 / holdMs) * 100,
      redisCpuPct: ((redisCpu * 1000) / holdMs) * 100,
      waitP50: Number(pings.waitP50),
      waitP99: Number(pings.waitP99),
      waitMax: Number(pings.waitMax),
      tripP99: Number(pings.tripP99),
      idleWaitP99: Number(idle.waitP99),
      idleTripP99: Number(idle.tripP99),
      lost,
    };
  } finally {
    await locker.close();
    await neighbour.stop();
  }
}

/** The neighbour's figures with nothing else running: this machine's floor. */
async function neighbourAlone({ target }: ScenarioContext, neighbour: BenchWorker) {
  neighbour.send({ type: 'start', url: target.url, everyMs: PING_EVERY_MS });
  await neighbour.next('started', 10_000);
  await sleep(NEIGHBOUR_ALONE_MS);
  neighbour.send({ type: 'stop' });
  return neighbour.next('pings', 10_000);
}

/** The server's CPU time so far (INFO cpu, user + system), in s. */
async function redisCpuSeconds({ target }: ScenarioContext): Promise<number> {
  const info = await target.admin.info('cpu');
  const read = (name: string): number => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1]);
  return read('used_cpu_user') + read('used_cpu_sys');
}

async function usedMemory({ target }: ScenarioContext): Promise<number> {
  const info = await target.admin.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}
