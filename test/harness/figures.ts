/**
 * Prints measured figures (durations, latencies, counts) when LOCK_TEST_FIGURES is set, so a
 * normal run stays quiet and a measuring run needs no code change.
 */
export function reportFigures(label: string, figures: Record<string, unknown>): void {
  if (!process.env.LOCK_TEST_FIGURES) return;
  process.stderr.write(`[figures] ${label}: ${JSON.stringify(figures)}\n`);
}

/** One measured figure, printed as `reportFigures` does. */
export function figure(name: string, value: number | string): void {
  reportFigures(name, { value: typeof value === 'number' ? Number(value.toFixed(1)) : value });
}

/** Nearest-rank percentile of ascending values. */
export function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)]!;
}
