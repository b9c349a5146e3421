import type { ChaosLoadResult, WireSection } from '../fixtures/chaos-load-worker.js';
import { countOverlaps } from './intervals.js';

/** One critical section of the load worker, with hrtimes shared by every process on the host. */
export interface Section {
  readonly key: number;
  readonly loop: number;
  readonly enter: bigint;
  readonly exit: bigint;
  /** When its lock's signal aborted, if it did before the section ended. */
  readonly lostAt?: bigint;
  /** It ran to its end (its Redis calls did not fail). */
  readonly done: boolean;
}

/** A section that began while an earlier-begun section of the same key was still running. */
export interface Overlap {
  readonly first: Section;
  readonly second: Section;
}

/** [from, to] in hrtime nanoseconds. */
export type Window = readonly [from: bigint, to: bigint];

export const MS = 1_000_000n;

export function hrNow(): bigint {
  return process.hrtime.bigint();
}

export function sectionsOf(results: readonly ChaosLoadResult[]): Section[] {
  return results.flatMap((result) => result.sections.map(fromWire));
}

function fromWire([key, loop, enter, exit, lost, done]: WireSection): Section {
  const section = { key, loop, enter: BigInt(enter), exit: BigInt(exit), done: done === 1 };
  return lost ? { ...section, lostAt: BigInt(lost) } : section;
}

function byKey(sections: readonly Section[]): Section[][] {
  const keys = new Map<number, Section[]>();
  for (const section of sections) {
    const list = keys.get(section.key);
    if (list) list.push(section);
    else keys.set(section.key, [section]);
  }
  return [...keys.values()];
}

/** The harness's checker, key by key: sections of different keys may run together. */
export function countOverlapsPerKey(sections: readonly Section[]): number {
  return byKey(sections).reduce(
    (sum, list) => sum + countOverlaps(list.map(({ enter, exit }) => [enter, exit] as const)),
    0,
  );
}

/**
 * Every overlap, with the earlier section that was still running (the one that ran on longest).
 * Counts what `countOverlaps` counts, so the two can be checked against each other.
 */
export function overlapsPerKey(sections: readonly Section[]): Overlap[] {
  const found: Overlap[] = [];
  for (const list of byKey(sections)) {
    const sorted = [...list].sort((a, b) => (a.enter < b.enter ? -1 : a.enter > b.enter ? 1 : 0));
    let running: Section | undefined;
    for (const section of sorted) {
      if (running && section.enter <= running.exit) found.push({ first: running, second: section });
      if (!running || section.exit > running.exit) running = section;
    }
  }
  return found;
}

export function inAny(at: bigint, windows: readonly Window[]): boolean {
  return windows.some(([from, to]) => at >= from && at <= to);
}

/** An overlap as ms relative to `origin`, for a failure message. */
export function describeOverlap({ first, second }: Overlap, origin: bigint): string {
  const ms = (at: bigint): string => `${Number((at - origin) / 1000n) / 1000}`;
  const lost = first.lostAt === undefined ? 'never told' : `told lost at ${ms(first.lostAt)}`;
  return (
    `key ${first.key}: loop ${first.loop} [${ms(first.enter)}, ${ms(first.exit)}] (${lost}) ` +
    `and loop ${second.loop} entering at ${ms(second.enter)} ms`
  );
}

/** How the overlaps of a run under faults divide up. */
export interface OverlapClasses {
  /** In a window where the library documents it may happen (after a restart). */
  readonly documented: Overlap[];
  /** After a lease lapsed while Redis was unreachable, and its holder was told first. */
  readonly told: Overlap[];
  /** Anything else: a broken promise. */
  readonly silent: Overlap[];
}

/**
 * Sorts overlaps by when the second section entered. In a lapse window an overlap is allowed
 * only if the first holder's signal had aborted by then, give or take `toldSlackMs` of timer
 * lateness in the holder's process.
 */
export function classifyOverlaps(
  overlaps: readonly Overlap[],
  windows: { readonly documented: readonly Window[]; readonly lapses: readonly Window[] },
  toldSlackMs: number,
): OverlapClasses {
  const classes: OverlapClasses = { documented: [], told: [], silent: [] };
  const slack = BigInt(toldSlackMs) * MS;
  for (const overlap of overlaps) {
    const { first, second } = overlap;
    if (inAny(second.enter, windows.documented)) classes.documented.push(overlap);
    else if (
      inAny(second.enter, windows.lapses) &&
      first.lostAt !== undefined &&
      first.lostAt <= second.enter + slack
    ) {
      classes.told.push(overlap);
    } else classes.silent.push(overlap);
  }
  return classes;
}
