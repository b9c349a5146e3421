/**
 * Critical sections as [enter, exit] pairs of `process.hrtime.bigint()`: a monotonic clock
 * every process on one host shares, so sections from many processes compare directly. They
 * cross IPC as decimal strings (JSON has no bigint).
 */
export type WireInterval = readonly [enter: string, exit: string];
export type Interval = readonly [enter: bigint, exit: bigint];

export function toWire([enter, exit]: Interval): WireInterval {
  return [String(enter), String(exit)];
}

export function fromWire([enter, exit]: WireInterval): Interval {
  return [BigInt(enter), BigInt(exit)];
}

/** Number of sections that begin before an earlier-begun section has ended. */
export function countOverlaps(intervals: readonly Interval[]): number {
  const sorted = [...intervals].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  let overlaps = 0;
  let latestExit = -1n;
  for (const [enter, exit] of sorted) {
    if (enter <= latestExit) overlaps++;
    if (exit > latestExit) latestExit = exit;
  }
  return overlaps;
}

/** The most sections open at one moment (a section's exit and another's enter at one instant count as apart). */
export function maxConcurrent(intervals: readonly Interval[]): number {
  const edges = intervals.flatMap(([enter, exit]) => [[enter, 1] as const, [exit, -1] as const]);
  edges.sort(([a, da], [b, db]) => (a < b ? -1 : a > b ? 1 : da - db));
  let open = 0;
  let most = 0;
  for (const [, delta] of edges) most = Math.max(most, (open += delta));
  return most;
}

/** Sections of `writers` that overlap any other section, of a writer or a reader. */
export function writerOverlaps(writers: readonly Interval[], readers: readonly Interval[]): number {
  const all = [...writers, ...readers];
  return writers.filter((w) => all.some((o) => o !== w && o[0] < w[1] && w[0] < o[1])).length;
}
