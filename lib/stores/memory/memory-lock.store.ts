import type {
  AcquireAttempt,
  AcquireRequest,
  ExtendResult,
  LeaseExtension,
  LockStore,
  ReleaseOptions,
  ReleaseReport,
  ReleaseResult,
  SharedLockType,
  StoreHealth,
  WaiterLists,
} from '../lock-store.interface.js';
import { MemoryHolderSets } from './memory-holder-sets.js';
import { inLibraryScope } from '../library-scope.js';
import { MemoryInspector } from './memory-inspection.js';

/*
 * The memory store: the reference implementation of the `LockStore` contract, in one process.
 */

interface Entry {
  token: string;
  expiresAt: number;
  /** When it was taken, ms since the epoch (for the inspector). */
  readonly since: number;
}

/**
 * An in-process lock store with the same semantics as the Redis store: leases expire, fences
 * only grow, release notifies subscribers. For your unit tests, and for single-process apps
 * that do not need a distributed lock. It locks nothing across processes.
 */
export class MemoryLockStore implements LockStore {
  private readonly entries = new Map<string, Entry>();
  private readonly fences = new Map<string, number>();
  private readonly listeners = new Map<string, Set<() => void>>();

  readonly kinds: readonly SharedLockType[] = ['semaphore', 'read', 'write'];
  private readonly holderSets = new MemoryHolderSets();
  /** A writer that stops waiting takes back its hold on new readers. */
  readonly waiters: WaiterLists = { leave: (key, queue) => this.holderSets.leave(key, queue) };
  /** Holders, owners and fences of a key; `list` and `forceRelease` (see memory-inspection.ts). */
  readonly inspector = new MemoryInspector({
    mutex: (key) => this.live(key),
    holderSet: (key) => this.holderSets.view(key),
    fence: (key) => this.fences.get(key),
    keys: () => this.keys(),
    remove: (key) => this.remove(key),
  });

  async tryAcquire(request: AcquireRequest): Promise<AcquireAttempt> {
    const { keys, token, ttl, fencing, kind } = request;
    const key = keys[0];
    if (kind && kind.type !== 'mutex') {
      if (this.live(key)) return { acquired: false, pttl: -1, conflict: 'a mutex' };
      const attempt = this.holderSets.acquire(request, kind);
      if (!attempt.acquired || !fencing) return attempt;
      return { acquired: true, fences: [this.nextFence(key)] };
    }
    const conflict = keys.map((each) => this.holderSets.heldAs(each)).find(Boolean);
    if (conflict) return { acquired: false, pttl: -1, conflict };
    let longest = -2;
    for (const key of keys) longest = Math.max(longest, this.pttl(key));
    if (longest !== -2) return { acquired: false, pttl: longest };
    const expiresAt = performance.now() + ttl;
    const since = Date.now();
    for (const key of keys) this.entries.set(key, { token, expiresAt, since });
    if (!fencing) return { acquired: true };
    return { acquired: true, fences: keys.map((key) => this.nextFence(key)) };
  }

  async release(
    keys: readonly string[],
    token: string,
    { quiet = false, kind }: ReleaseOptions = {},
  ): Promise<ReleaseReport> {
    if (!kind || kind.type === 'mutex') {
      return { result: this.releaseKeys(keys, token, quiet), waitersElsewhere: false };
    }
    const result = this.holderSets.release(keys[0], token);
    if (!quiet) this.notify(keys[0]);
    return { result, waitersElsewhere: false };
  }

  private releaseKeys(keys: readonly string[], token: string, quiet: boolean): ReleaseResult {
    let outcome: ReleaseResult = 'released';
    for (const key of keys) {
      const entry = this.live(key);
      if (entry?.token === token) {
        this.entries.delete(key);
        if (!quiet) this.notify(key);
      } else if (entry) {
        outcome = 'stolen';
      } else if (outcome === 'released') {
        outcome = 'expired';
      }
    }
    return outcome;
  }

  async extend(leases: readonly LeaseExtension[]): Promise<ExtendResult[]> {
    return leases.map(({ keys, token, ttl, kind }) => {
      if (kind && kind.type !== 'mutex') return this.holderSets.extend(keys[0], token, ttl);
      const found = keys.map((key) => this.live(key));
      if (found.some((entry) => entry && entry.token !== token)) return 'stolen';
      if (found.some((entry) => !entry)) return 'expired';
      for (const entry of found) entry!.expiresAt = performance.now() + ttl;
      return 'extended';
    });
  }

  async subscribe(key: string, onRelease: () => void): Promise<() => void> {
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(onRelease);
    return () => {
      set.delete(onRelease);
      if (set.size === 0 && this.listeners.get(key) === set) this.listeners.delete(key);
    };
  }

  async ping(): Promise<void> {}

  /** Always up: the store is this process's memory, which evicts nothing. */
  async health(): Promise<StoreHealth> {
    return { up: true, roundTripMs: 0 };
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }

  /** The live keys, for assertions in tests. */
  keys(): string[] {
    return [...this.entries.keys()].filter((key) => this.live(key)).concat(this.holderSets.keys());
  }

  /** Deletes a key as an outside actor would (e.g. an operator running DEL). */
  forceDelete(key: string): void {
    this.entries.delete(key);
  }

  /** A forced release: the key's lock goes, whoever holds it, and its waiters are woken. */
  private remove(key: string): boolean {
    const removed =
      (this.live(key) !== undefined && this.entries.delete(key)) || this.holderSets.remove(key);
    if (removed) this.notify(key);
    return removed;
  }

  /** Number of keys with at least one subscriber, for leak checks in tests. */
  get subscriptionCount(): number {
    return this.listeners.size;
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt <= performance.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private pttl(key: string): number {
    const entry = this.live(key);
    return entry ? Math.max(0, Math.ceil(entry.expiresAt - performance.now())) : -2;
  }

  private nextFence(key: string): number {
    const fence = (this.fences.get(key) ?? 0) + 1;
    this.fences.set(key, fence);
    return fence;
  }

  private notify(key: string): void {
    const set = this.listeners.get(key);
    if (set) inLibraryScope(() => queueMicrotask(() => set.forEach((listener) => listener())));
  }
}
