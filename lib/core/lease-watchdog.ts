import type { LockLossReason } from '../errors/lock.errors.js';
import type { ExtendResult, LeaseExtension } from '../stores/lock-store.interface.js';

/** What the watchdog needs to know about a held lease. Times are `performance.now()` ms. */
export interface WatchedLease {
  /** The store's keys (prefix applied). */
  readonly fullKeys: readonly string[];
  readonly token: string;
  readonly ttl: number;
  readonly autoRenew: boolean;
  /** Local deadline: the lease surely ends no later than this in the store. */
  expiresAt: number;
  /** Renewal stops here (`maxHold`). */
  readonly holdUntil: number;
}

export interface WatchdogHooks {
  extend(leases: readonly LeaseExtension[]): Promise<ExtendResult[]>;
  renewed(lease: WatchedLease, ttl: number): void;
  lost(lease: WatchedLease, reason: LockLossReason): void;
  failed(error: unknown): void;
  /** Clock-drift allowance subtracted from each renewed lease. */
  drift(ttl: number): number;
}

interface Schedule {
  renewAt: number;
  renewing: boolean;
  unreachable: boolean;
}

/**
 * One timer for every held lease. It renews auto-renewed leases every ttl/3, in rounds of one
 * store call each, and declares a lease lost when renewal says it is gone or when its local
 * deadline passes (renewal failed, `maxHold`, or no auto-renewal).
 */
export class LeaseWatchdog {
  private readonly leases = new Map<WatchedLease, Schedule>();
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;

  constructor(private readonly hooks: WatchdogHooks) {}

  get size(): number {
    return this.leases.size;
  }

  add(lease: WatchedLease, now = performance.now()): void {
    const renewAt = now + interval(lease);
    this.leases.set(lease, { renewAt, renewing: false, unreachable: false });
    this.arm(lease.autoRenew ? Math.min(renewAt, lease.expiresAt) : lease.expiresAt);
  }

  /**
   * Watches `to` in place of `from`, the same lease in the store under a new holder, on the
   * same renewal schedule: no timer work, as this is the hot path of a local hand-off.
   */
  transfer(from: WatchedLease, to: WatchedLease): void {
    const entry = this.leases.get(from);
    if (!entry) return this.add(to);
    this.leases.delete(from);
    // A renewal in flight answers for `from`; `to` keeps the deadline it inherited meanwhile.
    this.leases.set(to, { ...entry, renewing: false });
  }

  /** Re-arms a lease renewed outside the watchdog (a manual `extend`). */
  touch(lease: WatchedLease): void {
    const entry = this.leases.get(lease);
    if (!entry) return;
    entry.renewAt = performance.now() + interval(lease);
    this.arm(Math.min(entry.renewAt, lease.expiresAt));
  }

  /**
   * The timer stays armed, even with no lease left: it just finds nothing to do. Locks taken
   * and released one after another (one at a time) would otherwise set and clear a timer each.
   */
  delete(lease: WatchedLease): void {
    this.leases.delete(lease);
  }

  stop(): void {
    this.leases.clear();
    this.stopTimer();
  }

  private tick(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = performance.now();
    // The shortest interval among the leases due now; none are when the timer fired for a
    // deadline alone, and then nothing is renewed.
    let round = Infinity;
    for (const [lease, entry] of this.leases) {
      if (now >= lease.expiresAt) {
        this.leases.delete(lease);
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
    for (const [lease, entry] of this.leases) {
      if (renewable(lease, entry, now) && entry.renewAt < horizon) due.push(lease);
    }
    return due;
  }

  private renew(due: WatchedLease[], sentAt: number): void {
    const requests = due.map((lease) => ({
      keys: lease.fullKeys,
      token: lease.token,
      ttl: renewalTtl(lease, sentAt),
    }));
    for (const lease of due) this.leases.get(lease)!.renewing = true;
    this.hooks
      .extend(requests)
      .then(
        (results) =>
          results.forEach((result, i) => this.settle(due[i], requests[i].ttl, sentAt, result)),
        (error: unknown) => {
          this.hooks.failed(error);
          for (const lease of due) this.retrySoon(lease);
        },
      )
      .finally(() => this.schedule());
  }

  private settle(lease: WatchedLease, ttl: number, sentAt: number, result: ExtendResult): void {
    const entry = this.leases.get(lease);
    if (!entry) return;
    entry.renewing = false;
    if (result !== 'extended') {
      this.leases.delete(lease);
      this.hooks.lost(lease, result);
      return;
    }
    entry.unreachable = false;
    entry.renewAt = sentAt + interval(lease);
    lease.expiresAt = Math.max(lease.expiresAt, sentAt + ttl - this.hooks.drift(ttl));
    this.hooks.renewed(lease, ttl);
  }

  private retrySoon(lease: WatchedLease): void {
    const entry = this.leases.get(lease);
    if (!entry) return;
    entry.renewing = false;
    entry.unreachable = true;
    entry.renewAt = performance.now() + Math.max(10, interval(lease) / 4);
  }

  /** Recomputes the next wake-up from every lease (after a tick or a renewal answer). */
  private schedule(): void {
    let next = Infinity;
    const now = performance.now();
    for (const [lease, entry] of this.leases) {
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
    this.timer = setTimeout(() => this.tick(), Math.max(0, at - performance.now()));
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }
}

function interval(lease: WatchedLease): number {
  return lease.ttl / 3;
}

function renewable(lease: WatchedLease, entry: Schedule, now: number): boolean {
  return lease.autoRenew && !entry.renewing && now < lease.holdUntil;
}

function renewalTtl(lease: WatchedLease, now: number): number {
  return Math.max(1, Math.min(lease.ttl, Math.ceil(lease.holdUntil - now)));
}

function lossReason(lease: WatchedLease, entry: Schedule, now: number): LockLossReason {
  // A renewal still unanswered at the deadline is an unreachable store, not a vanished key.
  if (entry.unreachable || entry.renewing) return 'unreachable';
  if (lease.autoRenew && now >= lease.holdUntil) return 'max-hold';
  return 'expired';
}
