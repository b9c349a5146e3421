import { libraryLocker, runAll, takeAll } from './bulk-lockers.js';
import { openCommandWindow, total } from './command-counter.js';
import type { ScenarioContext } from './context.js';
import { BULK_CONCURRENCY } from './scale-held-locks.js';
import { percentile, sleep } from './stats.js';
import { BenchWorker } from './worker-pool.js';

/** The library's default `pollCap`. */
const POLL_CAP_MS = 1_000;

/**
 * Many busy keys, each with one waiter in another process. The holder releases them all, each
 * at its own time spread evenly over `spreadMs` (0: all at once, `BULK_CONCURRENCY` at a time),
 * and each key's hand-over is timed from the moment its own release returned to the moment its
 * waiter was granted it.
 */
export async function handOverAtScale(context: ScenarioContext, spreadMs: number) {
  const { target, options } = context;
  const count = options.durations.handOverKeys;
  await target.admin.flushall();
  const waiter = new BenchWorker('waiter', 'hand-over-worker.ts');
  const holder = await libraryLocker(target.url);
  try {
    const { releases } = await takeAll(holder, 'handover', count, 30_000, BULK_CONCURRENCY);
    waiter.send({ type: 'wait', url: target.url, prefix: 'handover', count });
    await waiter.next('waiting', 60_000);
    const subscribers = await untilSubscribed(context, count);
    // Past the waiters' first fallback look (at pollCap, before they all counted each other).
    await sleep(POLL_CAP_MS * 1.5);
    waiter.send({ type: 'mark' });
    await waiter.next('marked', 10_000);
    const closeCommands = await openCommandWindow(target.admin);
    const releasedAt: number[] = new Array(count);
    const start = performance.now();
    await runAll(count, BULK_CONCURRENCY, async (i) => {
      const due = start + (i * spreadMs) / count - performance.now();
      if (due >= 1) await sleep(due);
      await releases[i]();
      releasedAt[i] = performance.timeOrigin + performance.now();
    });
    waiter.send({ type: 'report' });
    const reply = await waiter.next('granted', 120_000);
    const commands = await closeCommands();
    const grantedAt = reply.at as number[];
    const latencies = grantedAt.map((at, i) => at - releasedAt[i]);
    return {
      handOverP50: percentile(latencies, 50),
      handOverP99: percentile(latencies, 99),
      handOverMax: Math.max(...latencies),
      burstMs: Math.max(...grantedAt) - Math.min(...releasedAt),
      waiterBusyPct: Number(reply.busy) * 100,
      waiterCpuUs: Number(reply.cpuUs) / count,
      cmdsPerHandOver: total(commands.server) / count,
      subscriberConnections: subscribers.connections,
      channels: subscribers.channels,
    };
  } finally {
    await holder.close();
    await waiter.stop();
  }
}

/** Waits until `count` channels are subscribed to (each waiter subscribes after its first try). */
async function untilSubscribed(context: ScenarioContext, count: number) {
  const deadline = performance.now() + 60_000;
  while (true) {
    const subscribers = await subscriberConnections(context);
    if (subscribers.channels >= count) return subscribers;
    if (performance.now() > deadline) throw new Error(`only ${subscribers.channels} subscribed`);
    await sleep(100);
  }
}

/** Connections with subscriptions, and how many channels they carry in all (CLIENT LIST). */
async function subscriberConnections({ target }: ScenarioContext) {
  const list = (await target.admin.client('LIST')) as string;
  const counts = list
    .split('\n')
    .map((line) => Number(/ sub=(\d+)/.exec(line)?.[1] ?? 0))
    .filter((subscriptions) => subscriptions > 0);
  return { connections: counts.length, channels: counts.reduce((a, b) => a + b, 0) };
}
