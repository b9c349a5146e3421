/**
 * The bounds the invariants hold the library to, as its design states them (see
 * docs/correctness.md): the margin a local deadline keeps before Redis can free a key, how soon a
 * forced release reaches its holder, and what a loop turn is. The measurements that excuse a
 * late timer are as fine as these.
 */

/** The margin: a lease's local deadline is `sentAt + ttl − leaseMargin(ttl)` (less drift). */
export function leaseMargin(ttl: number): number {
  return Math.min(25, ttl / 10);
}

/** A forced release aborts its holder's signal within this of the call's answer. */
export const FORCED_RELEASE_BOUND_MS = 200;

/** A loss that a stall hid is reported no later than this after the stall ends. */
export const TURN_MS = 30;

/** The loop-delay measurement's own slack (its sampling window and timer resolution). */
export const MEASURE_MS = 5;

/** A report counts from the loss it reports within this (timers, sampling, IPC order). */
export const REPORT_SLACK_MS = 10;
