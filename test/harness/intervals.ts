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
