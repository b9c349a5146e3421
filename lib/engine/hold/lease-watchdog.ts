import type { LockLossReason } from '../../errors/lock.errors.js';
import type { ExtendResult, LeaseExtension } from '../../stores/lock-store.interface.js';
import { DueHeap } from './due-heap.js';
import {
  dueAt,
  interval,
  lossReason,
  renewable,
  renewalTtl,
  type WatchEntry,
  type WatchedLease,
} from './watched-lease.js';
import { inLibraryScope } from '../../stores/library-scope.js';

export interface WatchdogHooks {
  extend(leases: readonly LeaseExtension[]): Promise<ExtendResult[]>;
  renewed(lease: WatchedLease, ttl: number): void;
  lost(lease: WatchedLease, reason: LockLossReason): void;
  failed(error: unknown): void;
  /** When a lease of `ttl` ms sent at `sentAt` is surely over in the store. */
  leaseEnd(sentAt: number, ttl: number): number;
}

/** Most leases one task of the watchdog looks at, so that its event loop is never held long. */
export const TASK_SLICE = 250;

/** Most leases one renewal call carries: what the Redis store sends as one EXTEND command. */
export const CALL_SLICE = 50;

/**
 * Leases due this soon are renewed with those due now: a timer does not fire more precisely,
 * and a tick for each lease of a busy millisecond would cost more than the renewals.
 */
export const RENEW_EARLY_MS = 1;

/**
 * Most renewal calls in flight at once. The leases due beyond them wait in line, still watched
 * to their deadlines, so that a burst of due leases neither piles commands up in a Redis others
 * share nor keeps thousands of requests alive in this process while the replies come. A lease
 * with a third of its ttl left goes out at once, whatever is in flight: the cap must never cost a
 * lock when replies are slow.
 */
export const CALLS_IN_FLIGHT = 4;

/**
 * One timer for every held lease. Each auto-renewed lease is renewed about ttl/3 after its own
 * last renewal (up to a quarter of that early, to fill a call with the leases due just before
 * it); a lease is lost when renewal says it is
 * gone or when its local deadline passes (renewal failed, `maxHold`, or no auto-renewal). The
 * leases wait in a heap by when they are next due, so a tick looks only at those, a slice of
 * them per task. The watchdog owns each lease's deadline, which follows every PEXPIRE sent for
 * it (`extending`, `extended`).
 */
export class LeaseWatchdog<L extends WatchedLease = WatchedLease> {
  private readonly due = new DueHeap<WatchEntry>();
  /** Taken for renewal (`renewing`), in the order they fell due, not sent yet; from `head` on. */
  private readonly line: WatchEntry[] = [];
  private head = 0;
  private calls = 0;
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;

  constructor(private readonly hooks: WatchdogHooks) {}

  get size(): number {
    return this.due.size;
  }

  /** Every lease watched now. */
  leases(): L[] {
    return this.due.all().map((entry) => entry.lease as L);
  }

  add(lease: L, now = performance.now()): void {
    const entry = newEntry(lease, now + interval(lease), false);
    entry.dueAt = dueAt(entry, now);
    this.due.push(entry);
    this.arm(entry.dueAt);
  }

  /**
   * Watches `to` in place of `from`, the same lease in the store under a new holder, on the
   * same schedule, in the same place: no timer work, as this is the hot path of a local hand-off.
   * A renewal of `from` in line or in flight goes on for `to`.
   */
  transfer(from: WatchedLease, to: L): void {
    const entry = from.watch;
    if (!entry) return this.add(to);
    from.watch = undefined;
    entry.lease = to;
    to.watch = entry;
  }

  /**
   * A PEXPIRE of `ttl` ms for `lease` goes out now; returns its number, for `extended`. Until it
   * is answered the store may apply it or not, so the earlier of the two deadlines counts: a
   * shorter lease shortens the deadline at once.
   */
  extending(lease: WatchedLease, sentAt: number, ttl: number): number {
    const entry = lease.watch;
    if (!entry) return 0;
    const end = this.hooks.leaseEnd(sentAt, ttl);
    // A renewal (the lock's ttl, once more) leaves the deadline, and its place, as they are.
    if (end < lease.expiresAt) {
      lease.expiresAt = end;
      this.reschedule(entry, sentAt);
    }
    return ++entry.sent;
  }

  /**
   * The store applied PEXPIRE number `sent`. Commands of one connection apply in the order
   * sent, so the last one sent is the lease in the store once answered; an earlier one may
   * already be replaced by a later one still unanswered.
   */
  extended(lease: WatchedLease, sent: number, sentAt: number, ttl: number): void {
    const entry = lease.watch;
    if (!entry) return;
    // Capped like a new lock's, for a lease handed on to a holder with an earlier `maxHold`.
    const end = Math.min(this.hooks.leaseEnd(sentAt, ttl), lease.holdUntil);
    lease.expiresAt = sent === entry.sent ? end : Math.min(lease.expiresAt, end);
    entry.unreachable = false;
    entry.renewAt = sentAt + interval(lease);
    this.reschedule(entry);
  }

  /**
   * The timer stays armed, even with no lease left: it just finds nothing to do. Locks taken
   * and released one after another (one at a time) would otherwise set and clear a timer each.
   */
  delete(lease: WatchedLease): void {
    const entry = lease.watch;
    if (!entry) return;
    lease.watch = undefined;
    this.due.remove(entry);
  }

  stop(): void {
    for (const entry of this.due.all()) entry.lease.watch = undefined;
    this.due.clear();
    this.line.length = this.head = 0;
    this.stopTimer();
  }

  private reschedule(entry: WatchEntry, now = performance.now()): void {
    entry.dueAt = dueAt(entry, now);
    this.due.moved(entry);
    this.arm(entry.dueAt);
  }

  /** Takes the leases due now off the top of the heap, a slice per task. */
  private tick(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = performance.now();
    let top = this.due.peek();
    for (let seen = 0; top && seen < TASK_SLICE; seen++) {
      const { lease } = top;
      if (now >= lease.expiresAt) {
        this.delete(lease);
        this.hooks.lost(lease, lossReason(lease, top, now));
      } else if (renewable(lease, top, now) && this.takes(top, now)) {
        top.renewing = true;
        this.line.push(top);
      } else if (top.dueAt > now) {
        break;
      }
      // Renewing (or not renewable any more), it is next due at its deadline.
      if (lease.watch === top) this.reschedule(top, now);
      top = this.due.peek();
    }
    this.sendLine();
    if (top && top.dueAt <= now) {
      inLibraryScope(() => setImmediate(() => this.tick()).unref());
    } else if (top) {
      this.arm(top.dueAt);
    }
  }

  /**
   * Whether `entry`, renewable, goes in line now: when due within `RENEW_EARLY_MS`, or up to a
   * quarter of its interval early to fill the last call in line. Not to start a call of its own: taking every lease due
   * within a quarter of an interval at once would send them in bursts, and a burst holds up
   * everyone else on the Redis.
   */
  private takes(entry: WatchEntry, now: number): boolean {
    const early = interval(entry.lease) / 4;
    if (entry.renewAt <= now + Math.min(RENEW_EARLY_MS, early)) return true;
    const lastCallHasRoom = (this.line.length - this.head) % CALL_SLICE !== 0;
    return lastCallHasRoom && entry.renewAt <= now + early;
  }

  /** Sends the leases in line, a slice per call, while fewer than `CALLS_IN_FLIGHT` are out. */
  private sendLine(): void {
    const { line } = this;
    const now = performance.now();
    while (
      this.head < line.length &&
      (this.calls < CALLS_IN_FLIGHT || urgent(line[this.head]!, now))
    ) {
      const slice: WatchEntry[] = [];
      while (slice.length < CALL_SLICE && this.head < line.length) {
        const entry = line[this.head++]!;
        // Gone from the watch (released, lost) while in line.
        if (entry.lease.watch === entry) slice.push(entry);
      }
      if (slice.length > 0) this.renew(slice, now);
    }
    if (this.head === line.length) line.length = this.head = 0;
    else this.arm(urgentAt(line[this.head]!));
  }

  private renew(entries: WatchEntry[], sentAt: number): void {
    const requests = entries.map(({ lease }) => ({
      keys: lease.fullKeys,
      token: lease.token,
      kind: lease.kind,
      ttl: renewalTtl(lease, sentAt),
    }));
    const sent = entries.map(({ lease }, i) => this.extending(lease, sentAt, requests[i].ttl));
    this.calls++;
    this.hooks
      .extend(requests)
      .then(
        (results) =>
          results.forEach((result, i) =>
            this.settle(entries[i], sent[i], requests[i].ttl, sentAt, result),
          ),
        (error: unknown) => {
          this.hooks.failed(error);
          for (const entry of entries) this.retrySoon(entry);
        },
      )
      .catch((error: unknown) => this.hooks.failed(error))
      .finally(() => {
        this.calls--;
        this.sendLine();
      });
  }

  /** The answer for the lease `entry` watched when the call went out (or the holder it was handed on to since). */
  private settle(
    entry: WatchEntry,
    sent: number,
    ttl: number,
    sentAt: number,
    result: ExtendResult,
  ): void {
    const { lease } = entry;
    if (lease.watch !== entry) return;
    entry.renewing = false;
    if (result !== 'extended') {
      this.delete(lease);
      this.hooks.lost(lease, result);
      return;
    }
    this.extended(lease, sent, sentAt, ttl);
    this.hooks.renewed(lease, ttl);
  }

  private retrySoon(entry: WatchEntry): void {
    if (entry.lease.watch !== entry) return;
    entry.renewing = false;
    entry.unreachable = true;
    entry.renewAt = performance.now() + Math.max(10, interval(entry.lease) / 4);
    this.reschedule(entry);
  }

  /** Makes sure the timer fires by `at`; cheap when it already does, as for most new leases. */
  private arm(at: number): void {
    if (at === Infinity || (this.timer && this.timerAt <= at)) return;
    this.stopTimer();
    this.timerAt = at;
    const delay = Math.max(0, at - performance.now());
    this.timer = inLibraryScope(() => setTimeout(() => this.tick(), delay).unref());
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }
}

function newEntry(lease: WatchedLease, renewAt: number, unreachable: boolean): WatchEntry {
  const entry: WatchEntry = {
    lease,
    renewAt,
    unreachable,
    renewing: false,
    sent: 0,
    dueAt: 0,
    slot: -1,
  };
  lease.watch = entry;
  return entry;
}

/** A lease in line that must go out now, calls in flight or not: a third of its ttl is left. */
function urgentAt({ lease }: WatchEntry): number {
  return lease.expiresAt - interval(lease);
}

function urgent(entry: WatchEntry, now: number): boolean {
  return now >= urgentAt(entry);
}
