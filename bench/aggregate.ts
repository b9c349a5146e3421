import { median } from './stats.js';

export type Figures = Record<string, number>;

/**
 * Figures that must hold in every repetition are combined by their worst value, not their
 * median: one overlap in one repetition is a failure.
 */
const WORST_OF: Record<string, 'sum' | 'max' | 'min'> = {
  overlaps: 'sum',
  gaveUp: 'sum',
  oversold: 'max',
  notAcquired: 'max',
  zeroLockWorkers: 'max',
  overLimit: 'max',
  writerOverlaps: 'sum',
  lost: 'max',
  releaseErrors: 'max',
  acquireErrors: 'max',
};

/** Combines the repetitions of one contender in one cell: medians, worst values where it matters. */
export function combineReps(reps: readonly Figures[]): Figures {
  const names = new Set(reps.flatMap((figures) => Object.keys(figures)));
  const combined: Figures = {};
  for (const name of names) {
    const values = reps.map((figures) => figures[name]).filter((value) => value !== undefined);
    const how = WORST_OF[name];
    combined[name] =
      how === 'sum'
        ? values.reduce((sum, value) => sum + value, 0)
        : how === 'max'
          ? Math.max(...values)
          : how === 'min'
            ? Math.min(...values)
            : median(values);
  }
  return combined;
}

/** Rotates the order each repetition so no contender always runs first (or right after another). */
export function rotation<T>(items: readonly T[], rep: number): T[] {
  const shift = rep % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}
