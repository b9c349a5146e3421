import type { ExtendResult } from '../../stores/lock-store.interface.js';
import {
  PUSH_SLICE,
  DueHeap,
  dueAt,
  goneReason,
  interval,
  lossReason,
  renewable,
  extensionOf,
  TASK_SLICE,
  type WatchdogHooks,
  type WatchEntry,
  type WatchedLease,
} from './watched-lease.js';
import { inLibraryScope } from '../../stores/library-scope.js';
import { RenewalLine } from './renewal-line.js';

/** The share of the measured renewal rate the leases may ask for: the rest absorbs their bursts. */
export const THROUGHPUT_HEADROOM = 0.8;
import { RenewalThroughput } from './renewal-throughput.js';

/**
 * One timer for every held lease. Each auto-renewed lease is renewed about ttl/3 after its own
 * last renewal, in calls sent through a `RenewalLine`; a lease is lost when renewal says it is
 * gone or when its local deadline passes (renewal failed, `maxHold`, or no auto-renewal). The
 * leases wait in a heap by when they are next due, so a tick looks only at those, a slice per
 * task; a new lease waits outside it until the next tick (`added`), and most locks end by then.
 * The watchdog owns each lease's deadline, which follows every PEXPIRE sent for it. Leases past
 * their deadline are all ended in the first task that finds them, however many (an event loop
 * that stalled), and a holder's own release or extend ends its lease first if it is overdue
 * (`loseIfOverdue`): a loss is told before the holder acts again.
 */
export class LeaseWatchdog<L extends WatchedLease = WatchedLease> {
  private readonly due = new DueHeap<WatchEntry>();
  /** The leases added since the last tick, in no order; each entry's `slot` is -2 - its index. */
  private readonly added: WatchEntry[] = [];
  private readonly line = new RenewalLine();
  /**
   * Renewals a second the watched auto-renewed leases ask for: 3,000 / ttl each, one per
   * `interval`, which the hot path inlines (see decision 0012).
   */
  demand = 0;
  /** What renewal has shown it can keep up with (see `fits`). */
  readonly throughput = new RenewalThroughput();
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;
  private onEmptied?: () => void;

  constructor(private readonly hooks: WatchdogHooks) {}

  get size(): number {
    return this.due.size + this.added.length;
  }
  /** Every lease watched now. */
  leases(): L[] {
    return [...this.due.all(), ...this.added].map((entry) => entry.lease as L);
  }

  /** Watches `lease`, taken at `now`, until its first renewal (`interval`, inlined: see 0012). */
  add(lease: L, now = performance.now()): void {
    const renewAt = now + lease.ttl / 3;
    const entry: WatchEntry = {
      lease,
      renewAt,
      unreachable: false,
      renewing: false,
      sent: 0,
      dueAt: Math.min(renewAt, lease.expiresAt),
      slot: -2 - this.added.length,
    };
    lease.watch = entry;
    this.added.push(entry);
    if (lease.autoRenew) this.demand += 3_000 / lease.ttl;
    this.arm(entry.dueAt);
  }

  /**
   * Whether a new auto-renewed lease of `ttl` ms fits in what renewal has shown it can keep up
   * with lately: all do until renewal has fallen behind once; then the demand, with it, must stay
   * within `THROUGHPUT_HEADROOM` of the rate measured. A lease that does not fit is refused before
   * any store call (`LockOverloadError`) rather than granted and lost: a process whose event loop
   * is too busy to renew keeps no more leases alive by taking more.
   */
  fits(ttl: number, now = performance.now()): boolean {
    const { rate, until } = this.throughput;
    if (rate === undefined || now >= until) return true;
    return this.demand + 3_000 / ttl <= rate * THROUGHPUT_HEADROOM;
  }

  /**
   * Ends `lease` as lost if its deadline has passed, whether or not a tick has looked yet; true
   * if it did. Called before its holder's store calls, so that none is made on a lost lease.
   */
  loseIfOverdue(lease: WatchedLease, now = performance.now()): boolean {
    const entry = lease.watch;
    if (!entry || now < lease.expiresAt) return false;
    this.delete(lease);
    this.hooks.lost(lease, lossReason(lease, entry, now));
    return true;
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
    // Capped like a new lock's, for a lease handed off to a holder with an earlier `maxHold`.
    const end = Math.min(this.hooks.leaseEnd(sentAt, ttl), lease.holdUntil);
    lease.expiresAt = sent === entry.sent ? end : Math.min(lease.expiresAt, end);
    entry.unreachable = false;
    entry.renewAt = sentAt + interval(lease);
    this.reschedule(entry);
  }

  /** The timer stays armed, even with no lease left: a timer set and cleared per lock costs more. */
  delete(lease: WatchedLease): void {
    const entry = lease.watch;
    if (!entry) return;
    lease.watch = undefined;
    if (entry.slot >= 0) this.due.remove(entry);
    else this.removeAdded(entry);
    if (lease.autoRenew) this.demand = Math.max(0, this.demand - 3_000 / lease.ttl);
    if (this.onEmptied && this.size === 0) this.onEmptied();
  }

  /** Resolves once no lease is watched (shutdown waits for the last holder). */
  emptied(): Promise<void> {
    return this.size === 0 ? Promise.resolve() : new Promise((r) => (this.onEmptied = r));
  }

  stop(): void {
    for (const entry of [...this.due.all(), ...this.added]) entry.lease.watch = undefined;
    this.due.clear();
    this.added.length = 0;
    this.line.clear();
    this.demand = 0;
    this.throughput.clear();
    this.stopTimer();
  }

  private reschedule(entry: WatchEntry, now = performance.now()): void {
    entry.dueAt = dueAt(entry, now);
    if (entry.slot >= 0) this.due.moved(entry);
    this.arm(entry.dueAt);
  }

  /** Takes `entry` out of `added`: the last entry moves into its place. */
  private removeAdded(entry: WatchEntry): void {
    const last = this.added.pop()!;
    if (last === entry) return;
    this.added[-2 - entry.slot] = last;
    last.slot = entry.slot;
  }

  /** Moves the leases added since the last tick into the heap, a slice per task. */
  private pushAdded(now: number): void {
    for (let pushed = 0; pushed < PUSH_SLICE && this.added.length > 0; pushed++) {
      const entry = this.added.pop()!;
      entry.dueAt = dueAt(entry, now);
      this.due.push(entry);
    }
  }

  /** Takes the leases due now off the top of the heap, a slice per task. */
  private tick(): void {
    // A tick run by setImmediate finds the timer armed: cleared, or ticks would pile up.
    this.stopTimer();
    const now = performance.now();
    this.pushAdded(now);
    let top = this.due.peek();
    for (let seen = 0; top && seen < TASK_SLICE;) {
      const { lease } = top;
      if (now >= lease.expiresAt) {
        // Not counted in the slice: every lease that ran out is told in this task.
        this.delete(lease);
        this.hooks.lost(lease, lossReason(lease, top, now));
        top = this.due.peek();
        continue;
      }
      seen++;
      if (renewable(lease, top, now) && this.line.takes(top, now)) {
        top.renewing = true;
        this.line.add(top);
      } else if (top.dueAt > now) {
        break;
      }
      // Renewing (or not renewable any more), it is next due at its deadline.
      if (lease.watch === top) this.reschedule(top, now);
      top = this.due.peek();
    }
    this.sendLine();
    if ((top && top.dueAt <= now) || this.added.length > 0) {
      // Referenced: an unreferenced immediate would wait for the next I/O or timer to run.
      inLibraryScope(() => setImmediate(() => this.tick()));
    } else if (top) {
      this.arm(top.dueAt);
    }
  }

  /** Sends the calls the line has ready, and makes sure the timer fires for its next urgent lease. */
  private sendLine(): void {
    const now = performance.now();
    for (const call of this.line.take(now)) this.renew(call, now);
    this.throughput.lineWaiting(this.line.waiting > 0, now);
    this.arm(this.line.nextUrgentAt());
  }

  private renew(entries: WatchEntry[], sentAt: number): void {
    const requests = entries.map(({ lease }) => extensionOf(lease, sentAt));
    const sent = entries.map(({ lease }, i) => this.extending(lease, sentAt, requests[i].ttl));
    this.hooks
      .extend(requests)
      .then(
        (results) => {
          this.throughput.answered(results.length, performance.now());
          results.forEach((result, i) =>
            this.settle(entries[i], sent[i], requests[i].ttl, sentAt, result),
          );
        },
        // The store call has told health of the failure; each lease retries soon.
        () => entries.forEach((entry) => this.retrySoon(entry)),
      )
      .catch(() => undefined)
      .finally(() => {
        this.line.answered();
        this.sendLine();
      });
  }

  /** The answer for the lease `entry` watched when the call went out, or its holder since. */
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
      this.hooks.lost(lease, goneReason(result));
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
