import { setMaxListeners } from 'node:events';
import { maxConcurrent, writerOverlaps } from '../test/harness/intervals.js';
import { openCommandWindow } from './command-counter.js';
import { closeAll, type Contender } from './contenders/index.js';
import { createLibrary } from './contenders/library.js';
import { createRedisSemaphore } from './contenders/redis-semaphore.js';
import { freshKey, warmUp, type ScenarioContext } from './context.js';
import { hotKeyFigures } from './hot-key-figures.js';
import { runHotKeyLoop } from './hot-key-loop.js';
import { measureRtt } from './redis-target.js';
import { runCell, withPairedRatio, type CellResult, type ScenarioResult } from './results.js';
import { meanSectionMs, type Section } from './sections.js';
import { sleep, spread } from './stats.js';

const LIMIT = 4;
const WORKERS = 64;
const CS_MS = 1;
const TTL = 30_000;
/** One write in this many sections of each worker: a 90/10 read/write mix. */
const WRITE_EVERY = 10;

/** The semaphore against redis-semaphore's, and a read-write mix, on one hot key. */
export async function runLockFamily(context: ScenarioContext): Promise<ScenarioResult> {
  const { url } = context.target;
  const semaphores = [
    await createLibrary(url, { limit: LIMIT }),
    await createRedisSemaphore(url, LIMIT),
  ];
  const readers = await createLibrary(url, { mode: 'read' });
  const writers = await createLibrary(url, { mode: 'write' }, 'library (writers)');
  const cells: CellResult[] = [];
  try {
    for (const contender of semaphores) await warmUp(contender, context.options.durations.warmUpMs);
    const semaphoreCell = await runCell(
      `limit=${LIMIT} W=${WORKERS} cs=${CS_MS}ms`,
      { limit: LIMIT, workers: WORKERS, csMs: CS_MS },
      semaphores,
      context.options.reps[6],
      (contender) => measureSemaphore(context, contender),
      context.log,
    );
    cells.push(withPairedRatio(semaphoreCell, 'redis-semaphore', 'locksPerSec', 'ratioToPeer'));
    const mixed = { name: 'library', settings: readers.settings };
    cells.push(
      await runCell(
        `read/write 90/10 W=${WORKERS} cs=${CS_MS}ms`,
        { workers: WORKERS, csMs: CS_MS, writeEvery: WRITE_EVERY },
        [mixed],
        context.options.reps[6],
        () => measureReadWrite(context, readers, writers),
        context.log,
      ),
    );
  } finally {
    await closeAll([...semaphores, readers, writers]);
  }
  return {
    id: 6,
    title: 'Semaphore and read-write lock, one process',
    cells,
    notes: [
      `${context.options.durations.hotKeyMs} ms per run; ttl ${TTL} ms.`,
      `pctOfMax: locks/s over limit/(measured cs + PING RTT), the rate of ${LIMIT} holders each handing over in one round trip.`,
      'mostAtOnce: the most sections open at one moment (must not exceed the limit; overLimit counts runs where it did).',
      `Read/write: every ${WRITE_EVERY}th section of each worker writes; waits are from asking to holding.`,
    ],
  };
}

async function measureSemaphore(context: ScenarioContext, contender: Contender) {
  const { target, options } = context;
  const rtt = await measureRtt(() => target.admin.ping());
  const closeWindow = await openCommandWindow(target.admin);
  const durationMs = options.durations.hotKeyMs;
  const key = freshKey(`sem:${contender.name}`);
  const result = await runHotKeyLoop(contender, {
    key,
    workers: WORKERS,
    csMs: CS_MS,
    durationMs,
    ttl: TTL,
  });
  const commands = await closeWindow();
  const { figures, commandMix } = hotKeyFigures({ ...result, durationMs, rtt, commands });
  const mostAtOnce = maxConcurrent(intervalsOf(result.sections));
  const theoreticalMax = (LIMIT * 1000) / (figures.csMs + rtt.hot);
  const { overlaps: _notForASemaphore, handoffP50: _, handoffP99: __, ...rest } = figures;
  return {
    figures: {
      ...rest,
      theoreticalMax,
      pctOfMax: (100 * figures.locksPerSec) / theoreticalMax,
      mostAtOnce,
      overLimit: mostAtOnce > LIMIT ? 1 : 0,
    },
    commandMix,
  };
}

/** W workers on one key, each writing every 10th section and reading the others. */
async function measureReadWrite(context: ScenarioContext, readers: Contender, writers: Contender) {
  const durationMs = context.options.durations.hotKeyMs;
  const key = freshKey('rw');
  const controller = new AbortController();
  setMaxListeners(Infinity, controller.signal);
  const reads: Section[] = [];
  const writes: Section[] = [];
  const readWaits: number[] = [];
  const writeWaits: number[] = [];
  let stopped = false;
  const timer = setTimeout(() => {
    stopped = true;
    controller.abort();
  }, durationMs);
  const worker = async (index: number): Promise<void> => {
    for (let n = index; !stopped; n++) {
      const write = n % WRITE_EVERY === 0;
      const askedAt = performance.now();
      const held = await (write ? writers : readers).acquire(key, {
        ttl: TTL,
        wait: 60_000,
        signal: controller.signal,
      });
      if (!held) continue;
      (write ? writeWaits : readWaits).push(performance.now() - askedAt);
      const enter = process.hrtime.bigint();
      await sleep(CS_MS);
      (write ? writes : reads).push({ enter, exit: process.hrtime.bigint(), worker: index });
      await held.release();
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, (_, index) => worker(index)));
  clearTimeout(timer);
  const read = spread(readWaits);
  const written = spread(writeWaits);
  return {
    figures: {
      locksPerSec: (reads.length + writes.length) / (durationMs / 1000),
      readsPerSec: reads.length / (durationMs / 1000),
      writesPerSec: writes.length / (durationMs / 1000),
      readWaitP50: read.p50,
      readWaitP99: read.p99,
      writeWaitP50: written.p50,
      writeWaitP99: written.p99,
      csMs: meanSectionMs([...reads, ...writes]),
      mostReadersAtOnce: maxConcurrent(intervalsOf(reads)),
      writerOverlaps: writerOverlaps(intervalsOf(writes), intervalsOf(reads)),
    },
  };
}

function intervalsOf(sections: readonly Section[]): (readonly [bigint, bigint])[] {
  return sections.map(({ enter, exit }) => [enter, exit] as const);
}
