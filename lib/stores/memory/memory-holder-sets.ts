import type {
  AcquireAttempt,
  AcquireRequest,
  ExtendResult,
  LockKind,
  ReleaseResult,
} from '../lock-store.interface.js';
import type { MemoryHolderSet } from './memory-inspection.js';

/** A key locked as a semaphore or a read-write lock: its holders, and a waiting writer. */
interface HolderSet {
  readonly limit?: number;
  /** Token → when its lease ends (`performance.now()` ms). */
  readonly holders: Map<string, number>;
  /** The token of the writer holding the key, if one does (it is then the only holder). */
  writer?: string;
  /** A writer waits (its queue id or token) until then: new readers wait behind it. */
  writerWaits?: { readonly id: string; readonly until: number };
}

/**
 * The semaphores and read-write locks of `MemoryLockStore`, with the Redis store's rules:
 * every holder has its own lease; a writer excludes everyone; once a writer waits, new readers
 * wait too; a key keeps one kind and limit while it has holders.
 */
export class MemoryHolderSets {
  private readonly sets = new Map<string, HolderSet>();

  /** How `key` is held, if it is, for a mutex's conflict check. */
  heldAs(key: string): string | undefined {
    const set = this.live(key);
    return set && set.holders.size > 0 ? describeSet(set) : undefined;
  }

  acquire(request: AcquireRequest, kind: Exclude<LockKind, { type: 'mutex' }>): AcquireAttempt {
    const key = request.keys[0];
    const now = performance.now();
    const found = this.live(key);
    const conflict = found && conflictOf(found, kind);
    if (conflict) return { acquired: false, pttl: -1, conflict };
    // A set kept only for a waiting writer's mark holds nothing: its kind and limit go, the
    // mark stays.
    const set =
      found && found.holders.size > 0 ? found : this.create(key, kind, found?.writerWaits);
    if (set.holders.has(request.token)) return { acquired: true };
    const busy = this.busyFor(set, request, now);
    if (busy !== undefined) return { acquired: false, pttl: busy };
    set.holders.set(request.token, now + request.ttl);
    if (kind.type === 'write') {
      set.writer = request.token;
      set.writerWaits = undefined;
    }
    return { acquired: true };
  }

  /** The wait a busy key asks for (ms, the shortest lease in the way), or undefined when free. */
  private busyFor(set: HolderSet, request: AcquireRequest, now: number): number | undefined {
    const type = request.kind!.type;
    const leases = [...set.holders.values()].map((end) => Math.ceil(end - now));
    if (type === 'semaphore') {
      return set.holders.size < set.limit! ? undefined : Math.min(...leases);
    }
    if (type === 'write') {
      if (set.holders.size === 0) return undefined;
      const { patience } = request;
      if (patience) set.writerWaits = { id: request.queue ?? request.token, until: now + patience };
      return Math.max(...leases);
    }
    if (set.writer !== undefined) return Math.max(...leases);
    const waits = set.writerWaits;
    if (waits && waits.until > now) return Math.max(Math.ceil(waits.until - now), ...leases);
    return undefined;
  }

  release(key: string, token: string): ReleaseResult {
    const set = this.sets.get(key);
    const end = set?.holders.get(token);
    if (!set || end === undefined) return 'expired';
    this.drop(key, set, token);
    return end > performance.now() ? 'released' : 'expired';
  }

  extend(key: string, token: string, ttl: number): ExtendResult {
    const set = this.live(key);
    if (!set?.holders.has(token)) return 'expired';
    set.holders.set(token, performance.now() + ttl);
    return 'extended';
  }

  /** A writer's queue stopped waiting: its mark no longer holds readers back. */
  leave(key: string, queue: string): void {
    const set = this.sets.get(key);
    if (set?.writerWaits?.id === queue) set.writerWaits = undefined;
  }

  /** The key's live set, for the inspector. */
  view(key: string): MemoryHolderSet | undefined {
    const set = this.live(key);
    return set && { ...set, writerWaits: set.writerWaits?.id };
  }

  /** Drops the key's set, holders and all; false when it had no live holder. */
  remove(key: string): boolean {
    const had = (this.live(key)?.holders.size ?? 0) > 0;
    this.sets.delete(key);
    return had;
  }

  /** The holder sets with live holders, for assertions in tests. */
  keys(): string[] {
    return [...this.sets.keys()].filter((key) => this.live(key));
  }

  /** The key's set without its ended leases, or undefined when none is left. */
  private live(key: string): HolderSet | undefined {
    const set = this.sets.get(key);
    if (!set) return undefined;
    const now = performance.now();
    for (const [token, end] of set.holders) if (end <= now) this.drop(key, set, token);
    // Dropped when its last holder went, or its writer's mark ran out since.
    this.forgetIfEmpty(key, set);
    return this.sets.get(key);
  }

  private drop(key: string, set: HolderSet, token: string): void {
    set.holders.delete(token);
    if (set.writer === token) set.writer = undefined;
    this.forgetIfEmpty(key, set);
  }

  private forgetIfEmpty(key: string, set: HolderSet): void {
    const waiting = set.writerWaits && set.writerWaits.until > performance.now();
    if (set.holders.size === 0 && !waiting) this.sets.delete(key);
  }

  private create(key: string, kind: LockKind, writerWaits?: HolderSet['writerWaits']): HolderSet {
    const set: HolderSet = {
      holders: new Map(),
      limit: kind.type === 'semaphore' ? kind.limit : undefined,
      writerWaits,
    };
    this.sets.set(key, set);
    return set;
  }
}

/**
 * How `set` is held when `kind` may not join its holders; undefined when it may. Only live
 * holders give a set its kind and limit.
 */
function conflictOf(set: HolderSet, kind: LockKind): string | undefined {
  const limit = kind.type === 'semaphore' ? kind.limit : undefined;
  if (set.holders.size === 0 || set.limit === limit) return undefined;
  return describeSet(set);
}

function describeSet(set: HolderSet): string {
  return set.limit === undefined ? 'a read-write lock' : `a semaphore of limit ${set.limit}`;
}
