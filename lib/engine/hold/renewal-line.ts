import { interval, type WatchEntry } from './watched-lease.js';

/** Most leases one renewal call carries: what the Redis store sends as one EXTEND command. */
export const CALL_SLICE = 50;

/**
 * Most renewal calls in flight at once. The leases due beyond them wait in line, still watched
 * to their deadlines, so that a burst of due leases neither piles commands up in a Redis others
 * share nor keeps thousands of requests alive in this process while the replies come. A lease
 * with a third of its ttl left is **urgent**: it goes out at once, whatever is in flight, as the
 * cap must never cost a lock when replies are slow.
 */
export const CALLS_IN_FLIGHT = 2;

/**
 * Leases due this soon are renewed with those due now: a timer does not fire more precisely,
 * and a tick for each lease of a busy millisecond would cost more than the renewals.
 */
export const RENEW_EARLY_MS = 1;

/** Leases already sent that the line may keep before it drops them. */
const SENT_KEPT = 1_024;

/**
 * The leases taken for renewal (`renewing`), in the order they fell due, and the renewal calls
 * in flight: the watchdog sends what `take` gives it and reports each call `answered`.
 */
export class RenewalLine {
  private readonly entries: WatchEntry[] = [];
  /** The first entry not sent yet. */
  private head = 0;
  private calls = 0;

  add(entry: WatchEntry): void {
    this.entries.push(entry);
  }

  /**
   * Whether `entry`, renewable, goes in line now: when due within `RENEW_EARLY_MS`, or up to a
   * quarter of its interval early to fill the last call in line, never to start one (a burst
   * of such calls would hold up everyone else on the Redis).
   */
  takes(entry: WatchEntry, now: number): boolean {
    const early = interval(entry.lease) / 4;
    if (entry.renewAt <= now + Math.min(RENEW_EARLY_MS, early)) return true;
    const lastCallHasRoom = (this.entries.length - this.head) % CALL_SLICE !== 0;
    return lastCallHasRoom && entry.renewAt <= now + early;
  }

  /**
   * The calls to send now, of at most `CALL_SLICE` leases each, counted in flight from here:
   * while fewer than `CALLS_IN_FLIGHT` are out, or the next lease is urgent. Leases gone from
   * the watch while in line (released, lost) are left out.
   */
  take(now: number): WatchEntry[][] {
    const { entries } = this;
    const calls: WatchEntry[][] = [];
    while (
      this.head < entries.length &&
      (this.calls < CALLS_IN_FLIGHT || now >= urgentAt(entries[this.head]!))
    ) {
      const call: WatchEntry[] = [];
      while (call.length < CALL_SLICE && this.head < entries.length) {
        const entry = entries[this.head++]!;
        if (entry.lease.watch === entry) call.push(entry);
      }
      if (call.length === 0) continue;
      calls.push(call);
      this.calls++;
    }
    // The leases sent leave now and then, so that a line never quite empty stays small.
    if (this.head === entries.length || this.head >= SENT_KEPT) {
      entries.copyWithin(0, this.head);
      entries.length -= this.head;
      this.head = 0;
    }
    return calls;
  }

  /** Leases in line that no call has taken yet. */
  get waiting(): number {
    return this.entries.length - this.head;
  }

  /** A call from `take` was answered (or failed). */
  answered(): void {
    this.calls--;
  }

  /** When the first lease waiting must go out, calls in flight or not; Infinity if none waits. */
  nextUrgentAt(): number {
    const next = this.entries[this.head];
    return next ? urgentAt(next) : Infinity;
  }

  clear(): void {
    this.entries.length = this.head = 0;
  }
}

/** A lease in line is urgent with a third of its ttl left. */
function urgentAt({ lease }: WatchEntry): number {
  return lease.expiresAt - interval(lease);
}
