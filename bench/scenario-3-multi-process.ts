import { openCommandWindow, sumCounts, type CommandWindow } from './command-counter.js';
import { FIRST_LOCK_CONTENDERS } from './contenders/index.js';
import { freshKey, type ScenarioContext } from './context.js';
import { hotKeyFigures } from './hot-key-figures.js';
import type { HotKeyLoopConfig } from './hot-key-loop.js';
import { measureRtt } from './redis-target.js';
import { runCell, type ScenarioResult } from './results.js';
import { fromWire, type Section, type WireSection } from './sections.js';
import { BenchWorker, type Message } from './worker-pool.js';

const PROCESSES = 4;
const WORKERS_PER_PROCESS = 16;
const CS_MS = 1;
const TTL = 30_000;

/**
 * One hot key shared by 4 processes × 16 workers. The processes stay up for the whole
 * scenario (each with every contender connected and warmed); the parent only orchestrates,
 * reads commandstats and merges the sections for the overlap detector.
 */
export async function runMultiProcess(context: ScenarioContext): Promise<ScenarioResult> {
  const { target, options, log } = context;
  const workers = Array.from(
    { length: PROCESSES },
    (_, i) => new BenchWorker(`hot-key worker ${i + 1}`, 'hot-key-worker.ts'),
  );
  try {
    // The locks of issue 6, on ioredis (the run's --contender picks among them).
    const names = FIRST_LOCK_CONTENDERS.filter((name) => options.contenders.includes(name));
    workers.forEach((worker) =>
      worker.send({ type: 'init', url: target.url, warmUpMs: options.durations.warmUpMs, names }),
    );
    const [ready] = await Promise.all(workers.map((worker) => worker.next('ready', 60_000)));
    const settings = ready.settings as Record<string, string>;
    const contenders = names.map((name) => ({ name, settings: settings[name] }));
    const cell = await runCell(
      `${PROCESSES}×${WORKERS_PER_PROCESS} cs=${CS_MS}ms`,
      { processes: PROCESSES, workers: WORKERS_PER_PROCESS, csMs: CS_MS },
      contenders,
      options.reps[3],
      async ({ name }) => {
        const rtt = await measureRtt(() => target.admin.ping());
        const closeWindow = await openCommandWindow(target.admin);
        const key = freshKey(`mp:${name}`);
        const replies = await Promise.all(
          workers.map((worker, index) => {
            const config: HotKeyLoopConfig = {
              key,
              workers: WORKERS_PER_PROCESS,
              csMs: CS_MS,
              durationMs: options.durations.multiProcessMs,
              ttl: TTL,
              workerBase: index * WORKERS_PER_PROCESS,
            };
            worker.send({ type: 'run', contender: name, config });
            return worker.next('result', options.durations.multiProcessMs + 60_000);
          }),
        );
        const commands = await closeWindow();
        return hotKeyFigures(merge(replies, commands, rtt, options.durations.multiProcessMs));
      },
      log,
    );
    return {
      id: 3,
      title: `Hot key across ${PROCESSES} processes × ${WORKERS_PER_PROCESS} workers`,
      cells: [cell],
      notes: [
        `${options.durations.multiProcessMs} ms per run; cs ${CS_MS} ms; ttl ${TTL} ms; hot-key retry settings.`,
        "processShare: each process's locks vs the mean of the processes, in % (min and max).",
      ],
    };
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
  }
}

function merge(
  replies: readonly Message[],
  commands: CommandWindow,
  rtt: { hot: number; afterIdle: number },
  durationMs: number,
) {
  const sections: Section[] = [];
  const perWorker: number[] = [];
  const waitsMs: number[] = [];
  const perProcess: number[] = [];
  let gaveUp = 0;
  let windowEnd = 0n;
  for (const reply of replies) {
    for (const wire of reply.sections as WireSection[]) sections.push(fromWire(wire));
    const counts = reply.perWorker as number[];
    perWorker.push(...counts);
    perProcess.push(counts.reduce((sum, count) => sum + count, 0));
    waitsMs.push(...(reply.waitsMs as number[]));
    gaveUp += reply.gaveUp as number;
    const end = BigInt(reply.windowEnd as string);
    if (end > windowEnd) windowEnd = end;
  }
  const client = sumCounts(replies.map((reply) => reply.client as Record<string, number>));
  return {
    sections,
    perWorker,
    waitsMs,
    gaveUp,
    durationMs,
    windowEnd,
    rtt,
    perProcess,
    // The locks run in the worker processes: this process's CPU time says nothing of them.
    commands: { server: commands.server, client, cpu: { ...commands.cpu, processUs: NaN } },
  };
}
