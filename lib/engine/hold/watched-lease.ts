import type { LockLossReason } from '../../errors/lock.errors.js';
import { leaseMargin } from '../request/lock-request.js';
import type { ExtendResult, LeaseExtension, LockKind } from '../../stores/lock-store.interface.js';

/** What the watchdog asks of its owner: renewal calls, and what became of each lease. */
export interface WatchdogHooks {
  extend(leases: readonly LeaseExtension[]): Promise<ExtendResult[]>;
  renewed(lease: WatchedLease, ttl: number): void;
  lost(lease: WatchedLease, reason: LockLossReason): void;
  /** When a lease of `ttl` ms sent at `sentAt` is surely over in the store. */
  leaseEnd(sentAt: number, ttl: number): number;
}

/** Most leases one task of the watchdog looks at, so that its event loop is never held long. */
export const TASK_SLICE = 250;

/**
 * Most new leases one task moves into the heap. A move is one O(log n) push, far cheaper than
 * looking at a due lease, hence more than `TASK_SLICE`.
 */
export const PUSH_SLICE = 2_000;

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
  /** The lease watched. */
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

/**
 * Why a lease is lost when the store answers a renewal, an extend or a release without it: gone
 * before its local deadline, which the lease was sent to outlast, it was removed by someone
 * else ('vanished'); or another owner holds the key ('stolen').
 */
export function goneReason(result: 'expired' | 'stolen'): LockLossReason {
  return result === 'expired' ? 'vanished' : 'stolen';
}

export function lossReason(lease: WatchedLease, entry: WatchEntry, now: number): LockLossReason {
  // Renewals are clipped to maxHold, so at the hold's end no answer could have kept the lease:
  // it is max-hold even while the last, clipped renewal is still out. Its deadline keeps the
  // lease's margin, which ends it that much before `holdUntil`.
  if (lease.autoRenew && now >= lease.holdUntil - leaseMargin(lease.ttl)) return 'max-hold';
  // A renewal still unanswered at the deadline is an unreachable store, not a vanished key.
  if (entry.unreachable || entry.renewing) return 'unreachable';
  return 'expired';
}

/** An entry of a `DueHeap`: when it is due, and where it sits (kept by the heap). */
export interface DueEntry {
  dueAt: number;
  slot: number;
}

/** Children per node: a wide heap is shallow, and a node's children sit side by side. */
export const CHILDREN = 4;

/**
 * A min-heap of entries by `dueAt`, each knowing its slot, so that adding, removing and moving
 * one costs O(log n) and the next one due is at the top: a timer over many leases never looks at
 * the ones not due. The due times are kept again in one typed array, in heap order, so that
 * ordering reads neighbouring numbers rather than entries scattered over the heap of the
 * process: with 100,000 leases, those reads are most of what a move costs.
 */
export class DueHeap<E extends DueEntry> {
  private readonly items: E[] = [];
  private times = new Float64Array(64);

  get size(): number {
    return this.items.length;
  }

  /** Every entry, in no order. */
  all(): readonly E[] {
    return this.items;
  }

  peek(): E | undefined {
    return this.items[0];
  }

  push(entry: E): void {
    const slot = this.items.length;
    if (slot === this.times.length) this.grow();
    this.items.push(entry);
    this.put(entry, slot);
    this.up(slot);
  }

  remove(entry: E): void {
    const last = this.items.pop()!;
    if (last === entry) return;
    this.put(last, entry.slot);
    this.moved(last);
  }

  /** Puts an entry whose `dueAt` changed back in order. */
  moved(entry: E): void {
    this.times[entry.slot] = entry.dueAt;
    this.up(entry.slot);
    this.down(entry.slot);
  }

  clear(): void {
    this.items.length = 0;
  }

  private up(slot: number): void {
    const { items, times } = this;
    const entry = items[slot]!;
    const at = times[slot]!;
    while (slot > 0) {
      const parent = ((slot - 1) / CHILDREN) | 0;
      if (times[parent]! <= at) break;
      this.put(items[parent]!, slot);
      slot = parent;
    }
    this.put(entry, slot);
  }

  private down(slot: number): void {
    const { items, times } = this;
    const entry = items[slot]!;
    const at = times[slot]!;
    const size = items.length;
    for (;;) {
      const first = CHILDREN * slot + 1;
      if (first >= size) break;
      let child = first;
      const end = Math.min(first + CHILDREN, size);
      for (let next = first + 1; next < end; next++) if (times[next]! < times[child]!) child = next;
      if (times[child]! >= at) break;
      this.put(items[child]!, slot);
      slot = child;
    }
    this.put(entry, slot);
  }

  private put(entry: E, slot: number): void {
    this.items[slot] = entry;
    this.times[slot] = entry.dueAt;
    entry.slot = slot;
  }

  private grow(): void {
    const times = new Float64Array(this.times.length * 2);
    times.set(this.times);
    this.times = times;
  }
}
