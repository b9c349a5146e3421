import { setMaxListeners } from 'node:events';
import type { Contender } from './contenders/index.js';
import type { Section } from './sections.js';
import { sleep } from './stats.js';

export interface HotKeyLoopConfig {
  readonly key: string;
  readonly workers: number;
  /** Critical section, ms; 0 enters and leaves in the same tick. */
  readonly csMs: number;
  readonly durationMs: number;
  readonly ttl: number;
  /** Added to worker indexes so ids stay unique across processes. */
  readonly workerBase?: number;
}

export interface HotKeyLoopResult {
  readonly sections: Section[];
  /** Locks each worker got inside the window. */
  readonly perWorker: number[];
  /** Acquire waits, ms; waits still pending when the window closed count with their time so far. */
  readonly waitsMs: number[];
  /** Acquires that gave up before the window closed (should be 0: waits are long). */
  readonly gaveUp: number;
  readonly windowStart: bigint;
  readonly windowEnd: bigint;
}

// Long enough never to end inside a window; the window's abort is what stops waiters.
const WAIT_MS = 60_000;

/**
 * W workers in this process loop acquire → section → release on one key for `durationMs`.
 * When the window closes, waiters are aborted (redlock cannot be: its waiters drain, and
 * those late sections still go through the overlap detector but not the throughput).
 */
export async function runHotKeyLoop(
  contender: Contender,
  config: HotKeyLoopConfig,
): Promise<HotKeyLoopResult> {
  const { key, workers, csMs, durationMs, ttl, workerBase = 0 } = config;
  const controller = new AbortController();
  // Every waiter listens on this one signal: many listeners here are expected, not a leak.
  setMaxListeners(Infinity, controller.signal);
  const sections: Section[] = [];
  const perWorker = new Array<number>(workers).fill(0);
  const waitsMs: number[] = [];
  let gaveUp = 0;
  let stopped = false;
  let stoppedAt = Infinity;
  const windowStart = process.hrtime.bigint();
  const windowEnd = windowStart + BigInt(durationMs) * 1_000_000n;
  const timer = setTimeout(() => {
    stopped = true;
    stoppedAt = performance.now();
    controller.abort();
  }, durationMs);

  const worker = async (index: number): Promise<void> => {
    while (!stopped) {
      const askedAt = performance.now();
      const held = await contender.acquire(key, { ttl, wait: WAIT_MS, signal: controller.signal });
      waitsMs.push(Math.min(performance.now(), stoppedAt) - askedAt);
      if (!held) {
        if (!stopped) gaveUp++;
        continue;
      }
      const enter = process.hrtime.bigint();
      if (csMs > 0) await sleep(csMs);
      const exit = process.hrtime.bigint();
      sections.push({ enter, exit, worker: workerBase + index });
      if (enter <= windowEnd) perWorker[index]++;
      await held.release();
    }
  };
  await Promise.all(Array.from({ length: workers }, (_, index) => worker(index)));
  clearTimeout(timer);
  return { sections, perWorker, waitsMs, gaveUp, windowStart, windowEnd };
}
