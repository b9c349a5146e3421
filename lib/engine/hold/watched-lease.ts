import type { LockLossReason } from '../../errors/lock.errors.js';
import type { LeaseExtension, LockKind } from '../../stores/lock-store.interface.js';
import type { DueEntry } from './due-heap.js';

/** What the watchdog needs to know about a held lease. Times are `performance.now()` ms. */
export interface WatchedLease {
  /** The store's keys (prefix applied). */
  readonly fullKeys: readonly string[];
  readonly token: string;
  readonly kind: LockKind;
  readonly ttl: number;
  readonly autoRenew: boolean;
  /** Local deadline: the lease surely ends no later than this in the store. */
  expiresAt: number;
  /** Renewal stops here (`maxHold`). */
  readonly holdUntil: number;
  /** Set by the watchdog while it watches the lease (no map to look the lease up in). */
  watch?: WatchEntry;
}

/** A watched lease's renewal schedule, and its place in the watchdog's heap. */
export interface WatchEntry extends DueEntry {
  /** The lease watched; a local hand-off puts its new holder here (`transfer`). */
  lease: WatchedLease;
  renewAt: number;
  renewing: boolean;
  unreachable: boolean;
  /** How many PEXPIREs were sent for the lease: the last one sent sets its deadline. */
  sent: number;
}

/** How often an auto-renewed lease is renewed: a third of its ttl, as is usual. */
export function interval(lease: WatchedLease): number {
  return lease.ttl / 3;
}

export function renewable(lease: WatchedLease, entry: WatchEntry, now: number): boolean {
  return lease.autoRenew && !entry.renewing && now < lease.holdUntil;
}

/** When the watchdog must next look at a lease: its renewal, or else its deadline. */
export function dueAt(entry: WatchEntry, now: number): number {
  const { lease, renewAt } = entry;
  return renewable(lease, entry, Math.max(now, renewAt))
    ? Math.min(renewAt, lease.expiresAt)
    : lease.expiresAt;
}

/** The lease to ask for at `now`: `ttl`, but never past `maxHold`. */
export function renewalTtl(lease: WatchedLease, now: number, ttl = lease.ttl): number {
  return Math.max(1, Math.min(ttl, Math.ceil(lease.holdUntil - now)));
}

/** The renewal of `lease` sent at `sentAt`, as the store takes it. */
export function extensionOf(lease: WatchedLease, sentAt: number): LeaseExtension {
  const { fullKeys: keys, token, kind } = lease;
  return { keys, token, kind, ttl: renewalTtl(lease, sentAt) };
}

export function lossReason(lease: WatchedLease, entry: WatchEntry, now: number): LockLossReason {
  // A renewal still unanswered at the deadline is an unreachable store, not a vanished key.
  if (entry.unreachable || entry.renewing) return 'unreachable';
  if (lease.autoRenew && now >= lease.holdUntil) return 'max-hold';
  return 'expired';
}

/** A new watch entry for `lease`, put on it (no map to look the lease up in). */
export function newEntry(lease: WatchedLease, renewAt: number): WatchEntry {
  const entry: WatchEntry = {
    lease,
    renewAt,
    unreachable: false,
    renewing: false,
    sent: 0,
    dueAt: 0,
    slot: -1,
  };
  lease.watch = entry;
  return entry;
}
