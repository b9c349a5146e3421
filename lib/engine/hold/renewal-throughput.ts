/**
 * A rate measured while leases waited in line is forgotten this long after the line last
 * cleared (ms): the load that made it may be gone, and a new measure is taken if it is not.
 */
export const THROUGHPUT_MEMORY = 2_000;

/** A measure needs the line to have stayed full this long (ms), or it is a blip, not a rate. */
const MIN_MEASURE_MS = 20;

/**
 * The renewal throughput of this process, measured rather than assumed: how many renewals were
 * answered a second while leases waited in line behind the calls in flight, when the line (the
 * event loop, the connection, Redis) was what held renewal back. The watchdog holds the demand
 * against it (see `LeaseWatchdog.fits`). Its fields are read on every auto-renewed acquire, so
 * they are plain numbers: a rate, and until when it counts.
 */
export class RenewalThroughput {
  /** Renewals a second answered while the line was full, once measured. */
  rate?: number;
  /** Until when `rate` counts (`performance.now()` ms): a while after the line last cleared. */
  until = -Infinity;
  /** The current spell of a full line: when it began, and the renewals answered since. */
  private fullSince?: number;
  private answeredWhileFull = 0;

  /** Whether leases wait in line behind the calls in flight, as of `now`. */
  lineWaiting(waiting: boolean, now: number): void {
    if (waiting) {
      this.fullSince ??= now;
      this.until = Infinity;
      return;
    }
    if (this.fullSince === undefined) return;
    this.measure(now);
    this.fullSince = undefined;
    this.until = now + THROUGHPUT_MEMORY;
  }

  /** `count` renewals were answered at `now`. */
  answered(count: number, now: number): void {
    if (this.fullSince === undefined) return;
    this.answeredWhileFull += count;
    // A line that never clears still yields a rate, once a second.
    if (now - this.fullSince >= 1_000) {
      this.measure(now);
      this.fullSince = now;
    }
  }

  clear(): void {
    this.rate = this.fullSince = undefined;
    this.until = -Infinity;
    this.answeredWhileFull = 0;
  }

  private measure(now: number): void {
    const spell = now - this.fullSince!;
    if (spell >= MIN_MEASURE_MS) {
      const rate = (this.answeredWhileFull * 1_000) / spell;
      // The latest spell counts most: the load behind it is the one to reckon with.
      this.rate = this.rate === undefined ? rate : (this.rate + 3 * rate) / 4;
    }
    this.answeredWhileFull = 0;
  }
}
