import type { LockLossReason } from '../../errors/lock.errors.js';
import type { ExtendResult, LeaseExtension } from '../../stores/lock-store.interface.js';
import {
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

/**
 * One timer for every held lease. It renews auto-renewed leases every ttl/3, in rounds of one
 * store call each, and declares a lease lost when renewal says it is gone or when its local
 * deadline passes (renewal failed, `maxHold`, or no auto-renewal). It owns each lease's
 * deadline, which follows every PEXPIRE sent for it (`extending`, `extended`).
 */
export class LeaseWatchdog<L extends WatchedLease = WatchedLease> {
  /**
   * In no order: a lease leaves by swapping the last entry into its slot. A map would have to
   * hash every new lease, which costs more than the rest of watching it.
   */
  private readonly entries: WatchEntry[] = [];
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;

  constructor(private readonly hooks: WatchdogHooks) {}

  get size(): number {
    return this.entries.length;
  }

  /** Every lease watched now. */
  leases(): L[] {
    return this.entries.map((entry) => entry.lease as L);
  }

  add(lease: L, now = performance.now()): void {
    const renewAt = now + interval(lease);
    this.place(lease, renewAt, false);
    this.arm(lease.autoRenew ? Math.min(renewAt, lease.expiresAt) : lease.expiresAt);
  }

  /**
   * Watches `to` in place of `from`, the same lease in the store under a new holder, on the
   * same renewal schedule: no timer work, as this is the hot path of a local hand-off.
   */
  transfer(from: WatchedLease, to: L): void {
    const entry = from.watch;
    if (!entry) return this.add(to);
    this.delete(from);
    // A renewal in flight answers for `from`; `to` keeps the deadline it inherited meanwhile.
    this.place(to, entry.renewAt, entry.unreachable);
  }

  /**
   * A PEXPIRE of `ttl` ms for `lease` goes out now; returns its number, for `extended`. Until it
   * is answered the store may apply it or not, so the earlier of the two deadlines counts: a
   * shorter lease shortens the deadline at once.
   */
  extending(lease: WatchedLease, sentAt: number, ttl: number): number {
    const entry = lease.watch;
    if (!entry) return 0;
    lease.expiresAt = Math.min(lease.expiresAt, this.hooks.leaseEnd(sentAt, ttl));
    this.arm(lease.expiresAt);
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
    const end = this.hooks.leaseEnd(sentAt, ttl);
    lease.expiresAt = sent === entry.sent ? end : Math.min(lease.expiresAt, end);
    entry.unreachable = false;
    entry.renewAt = sentAt + interval(lease);
    this.arm(Math.min(entry.renewAt, lease.expiresAt));
  }

  /**
   * The timer stays armed, even with no lease left: it just finds nothing to do. Locks taken
   * and released one after another (one at a time) would otherwise set and clear a timer each.
   */
  delete(lease: WatchedLease): void {
    const entry = lease.watch;
    if (!entry) return;
    lease.watch = undefined;
    const last = this.entries.pop()!;
    if (last === entry) return;
    this.entries[entry.slot] = last;
    last.slot = entry.slot;
  }

  stop(): void {
    for (const entry of this.entries) entry.lease.watch = undefined;
    this.entries.length = 0;
    this.stopTimer();
  }

  private place(lease: WatchedLease, renewAt: number, unreachable: boolean): void {
    const slot = this.entries.length;
    lease.watch = { lease, slot, renewAt, renewing: false, unreachable, sent: 0 };
    this.entries.push(lease.watch);
  }

  private tick(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = performance.now();
    // The shortest interval among the leases due now; none are when the timer fired for a
    // deadline alone, and then nothing is renewed.
    let round = Infinity;
    // From the end: a lease that leaves swaps in the last entry, which was already seen.
    for (let slot = this.entries.length - 1; slot >= 0; slot--) {
      const entry = this.entries[slot];
      if (!entry) continue;
      const { lease } = entry;
      if (now >= lease.expiresAt) {
        this.delete(lease);
        this.hooks.lost(lease, lossReason(lease, entry, now));
      } else if (renewable(lease, entry, now) && entry.renewAt <= now) {
        round = Math.min(round, interval(lease));
      }
    }
    if (round < Infinity) this.renew(this.dueBefore(now + round, now), now);
    this.schedule();
  }

  /**
   * Every renewable lease that would fall due before `horizon`, the next round: renewed early,
   * at the price of a PEXPIRE inside this round's call, instead of in a call of its own. Leases
   * taken at different times (a burst, or a steady stream) thus share one call per interval.
   */
  private dueBefore(horizon: number, now: number): WatchedLease[] {
    const due: WatchedLease[] = [];
    for (const entry of this.entries) {
      if (renewable(entry.lease, entry, now) && entry.renewAt < horizon) due.push(entry.lease);
    }
    return due;
  }

  private renew(due: WatchedLease[], sentAt: number): void {
    const requests = due.map((lease) => ({
      keys: lease.fullKeys,
      token: lease.token,
      kind: lease.kind,
      ttl: renewalTtl(lease, sentAt),
    }));
    const sent = due.map((lease, i) => {
      lease.watch!.renewing = true;
      return this.extending(lease, sentAt, requests[i].ttl);
    });
    this.hooks
      .extend(requests)
      .then(
        (results) =>
          results.forEach((result, i) =>
            this.settle(due[i], sent[i], requests[i].ttl, sentAt, result),
          ),
        (error: unknown) => {
          this.hooks.failed(error);
          for (const lease of due) this.retrySoon(lease);
        },
      )
      .finally(() => this.schedule());
  }

  private settle(
    lease: WatchedLease,
    sent: number,
    ttl: number,
    sentAt: number,
    result: ExtendResult,
  ): void {
    const entry = lease.watch;
    if (!entry) return;
    entry.renewing = false;
    if (result !== 'extended') {
      this.delete(lease);
      this.hooks.lost(lease, result);
      return;
    }
    this.extended(lease, sent, sentAt, ttl);
    this.hooks.renewed(lease, ttl);
  }

  private retrySoon(lease: WatchedLease): void {
    const entry = lease.watch;
    if (!entry) return;
    entry.renewing = false;
    entry.unreachable = true;
    entry.renewAt = performance.now() + Math.max(10, interval(lease) / 4);
  }

  /** Recomputes the next wake-up from every lease (after a tick or a renewal answer). */
  private schedule(): void {
    let next = Infinity;
    const now = performance.now();
    for (const entry of this.entries) {
      const { lease } = entry;
      const at = renewable(lease, entry, now)
        ? Math.min(entry.renewAt, lease.expiresAt)
        : lease.expiresAt;
      if (at < next) next = at;
    }
    this.stopTimer();
    this.arm(next);
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
