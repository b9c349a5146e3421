import { countOverlaps as countIntervalOverlaps } from '../test/harness/intervals.js';
import { nsToMs } from './stats.js';

/**
 * One critical section: entered once the lock was granted, left before release was called.
 * Times are `process.hrtime.bigint()`, a monotonic clock every process on the host shares, so
 * sections of several processes compare directly.
 */
export interface Section {
  readonly enter: bigint;
  readonly exit: bigint;
  /** Who held it; unique across processes in a multi-process cell. */
  readonly worker: number;
}

/** JSON has no bigint: sections cross IPC as decimal strings. */
export type WireSection = readonly [enter: string, exit: string, worker: number];

export function toWire({ enter, exit, worker }: Section): WireSection {
  return [String(enter), String(exit), worker];
}

export function fromWire([enter, exit, worker]: WireSection): Section {
  return { enter: BigInt(enter), exit: BigInt(exit), worker };
}

/**
 * The overlap detector: sections that begin before an earlier-begun one has ended. Any
 * non-zero count means two holders were inside at once.
 */
export function countOverlaps(sections: readonly Section[]): number {
  return countIntervalOverlaps(sections.map(({ enter, exit }) => [enter, exit] as const));
}

export function byEnter(sections: readonly Section[]): Section[] {
  return [...sections].sort((a, b) => (a.enter < b.enter ? -1 : a.enter > b.enter ? 1 : 0));
}

/**
 * Hand-offs between consecutive holders (holder leaves → next holder enters), for sections
 * entered up to `until`, and the share that went back to the worker that just left.
 */
export function handoffs(
  sections: readonly Section[],
  until: bigint,
): { gapsMs: number[]; selfShare: number } {
  const sorted = byEnter(sections).filter((section) => section.enter <= until);
  const gapsMs: number[] = [];
  let self = 0;
  for (let i = 1; i < sorted.length; i++) {
    gapsMs.push(nsToMs(sorted[i].enter - sorted[i - 1].exit));
    if (sorted[i].worker === sorted[i - 1].worker) self++;
  }
  return { gapsMs, selfShare: gapsMs.length ? self / gapsMs.length : NaN };
}

/** Mean time spent inside the sections, ms: the real critical section, timer overshoot included. */
export function meanSectionMs(sections: readonly Section[]): number {
  if (sections.length === 0) return NaN;
  let sum = 0n;
  for (const { enter, exit } of sections) sum += exit - enter;
  return nsToMs(sum) / sections.length;
}
