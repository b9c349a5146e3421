import { describeCounts, total, type CommandWindow } from './command-counter.js';
import { countOverlaps, handoffs, meanSectionMs, type Section } from './sections.js';
import { mean, spread } from './stats.js';
import type { Figures } from './aggregate.js';

/** What one hot-key run measured, before figures are derived. */
export interface HotKeySample {
  readonly sections: readonly Section[];
  readonly perWorker: readonly number[];
  readonly waitsMs: readonly number[];
  readonly gaveUp: number;
  readonly durationMs: number;
  /** Last moment a section may enter and still count toward throughput. */
  readonly windowEnd: bigint;
  readonly rtt: { readonly hot: number; readonly afterIdle: number };
  readonly commands: CommandWindow;
  /** Locks per process, for the multi-process cell. */
  readonly perProcess?: readonly number[];
}

/**
 * The hot-key figures. The theoretical max is 1 / (cs + RTT) with cs the measured mean time
 * inside the section (the 1 ms timer overshoots), and RTT a PING round trip measured just
 * back to back just before the run: no lock can hand over faster than one round trip.
 */
export function hotKeyFigures(sample: HotKeySample): { figures: Figures; commandMix: string } {
  const { sections, perWorker, waitsMs, durationMs, rtt, commands } = sample;
  const locks = perWorker.reduce((sum, count) => sum + count, 0);
  const locksPerSec = locks / (durationMs / 1000);
  const csMs = meanSectionMs(sections);
  const theoreticalMax = 1000 / (csMs + rtt.hot);
  const handoff = handoffs(sections, sample.windowEnd);
  const handoffSpread = spread(handoff.gapsMs);
  const wait = spread(waitsMs);
  const workerMean = mean(perWorker);
  const everyLock = Math.max(1, sections.length);
  const figures: Figures = {
    locksPerSec,
    pctOfMax: (100 * locksPerSec) / theoreticalMax,
    theoreticalMax,
    csMs,
    rttMs: rtt.hot,
    rttAfterIdleMs: rtt.afterIdle,
    handoffP50: handoffSpread.p50,
    handoffP99: handoffSpread.p99,
    selfHandoffPct: 100 * handoff.selfShare,
    waitP50: wait.p50,
    waitP99: wait.p99,
    leastServed: Math.min(...perWorker),
    mostServed: Math.max(...perWorker),
    leastServedPct: (100 * Math.min(...perWorker)) / workerMean,
    mostServedPct: (100 * Math.max(...perWorker)) / workerMean,
    zeroLockWorkers: perWorker.filter((count) => count === 0).length,
    cmdsPerLock: total(commands.server) / everyLock,
    topLevelPerLock: total(commands.client) / everyLock,
    cpuUsPerLock: commands.cpu.processUs / everyLock,
    redisCpuUsPerLock: commands.cpu.redisUs / everyLock,
    overlaps: countOverlaps(sections),
    gaveUp: sample.gaveUp,
  };
  if (sample.perProcess) {
    const processMean = mean(sample.perProcess);
    const deviations = sample.perProcess.map(
      (count) => (100 * (count - processMean)) / processMean,
    );
    figures.processShareMinPct = Math.min(...deviations);
    figures.processShareMaxPct = Math.max(...deviations);
  }
  return { figures, commandMix: describeCounts(commands.server, everyLock, 7) };
}
