import type { ResolvedLockOptions } from './request/lock-options.interface.js';
import type { LockKind, LockStore } from '../stores/lock-store.interface.js';
import { MUTEX } from './request/lock-request.js';
import { LockShutdownError } from '../errors/lock.errors.js';
import { Subject } from 'rxjs';
import type { LockEvent } from './lock.events.js';
import {
  CallDeadlines,
  callStore,
  type CallHooks,
  type StoreOperation,
} from './store-calls/store-call.js';
import { inLibraryScope } from '../stores/library-scope.js';
import { StoreHealthMonitor } from './store-calls/store-health-monitor.js';

export interface LockEngineConfig {
  readonly store: LockStore;
  readonly keyPrefix: string;
  readonly defaults: ResolvedLockOptions;
  /** Longest a single store call may take before it fails with `LockStoreError`. */
  readonly storeTimeout: number;
  /** Longest sleep of a waiter that gets no release notification. */
  readonly pollCap: number;
  /** Most releases in a row handed straight to a waiter in this process (no store call). */
  readonly localHandoffs: number;
  /** Status code carried by `LockBusyError`. */
  readonly busyStatusCode: number;
  /** Longest `close()` waits for held locks to be released before it leaves them to expire. */
  readonly shutdownTimeout: number;
  /** Hears what an operator should: the store going down and coming back, and lost locks. */
  readonly log?: (event: LockEvent) => void;
  /** Lets go of the store on `close()`: closes what the module created, leaves the user's open. */
  readonly closeStore: () => Promise<void>;
}

/** What the engine's parts share: configuration, the event stream, bounded store calls. */
export class EngineContext {
  /** The engine's event stream. Events are only built when someone listens (`observed`). */
  readonly bus = new Subject<LockEvent>();
  closed = false;
  /** The deadlines of every store call this engine makes. */
  readonly deadlines: CallDeadlines;
  /**
   * Leases may pass to the next waiter here without the store's `tryAcquire`: by a local
   * hand-off, or by a release that sets a successor lease.
   */
  readonly localGrants: boolean;

  constructor(readonly config: LockEngineConfig) {
    this.deadlines = new CallDeadlines(config.storeTimeout);
    this.localGrants = config.store.grantsOnlyOnAcquire !== true;
    this.health = new StoreHealthMonitor(
      { emit: (event) => this.emit(event), log: (event) => config.log?.(event) },
      config.store.endpoint,
      config.keyPrefix,
    );
  }

  /** Every store call reports to it; it tells of outages once each. */
  readonly health: StoreHealthMonitor;

  get store(): LockStore {
    return this.config.store;
  }

  /**
   * A store call bounded by `storeTimeout`; failures become `LockStoreError` and an event.
   * `hooks.map` runs in the step the answer arrives.
   */
  storeCall<T, R = T>(
    operation: Promise<T>,
    key: string | undefined,
    what: StoreOperation,
    hooks?: CallHooks<T, R>,
  ): Promise<R> {
    return callStore(operation, key, what, this.deadlines, hooks, this.health);
  }

  /** Best-effort release of a lease nobody holds any more (a late or unwanted grant). */
  giveBack(keys: readonly string[], token: string, kind: LockKind = MUTEX): void {
    // A store call like any other, so that shutdown waits for it before closing the store.
    const options = kind === MUTEX ? undefined : { kind };
    const release = Promise.resolve().then(() => this.store.release(keys, token, options));
    callStore(release, undefined, 'release', this.deadlines).catch(() => undefined);
  }

  /** Acquire attempts sent and not yet answered: shutdown waits for them. */
  private attempts = 0;
  private attemptsDone?: () => void;

  attemptSent(): void {
    this.attempts++;
  }

  attemptSettled(): void {
    if (--this.attempts === 0) this.attemptsDone?.();
  }

  /** Resolves once every attempt sent has its answer (or failed). */
  attemptsAnswered(): Promise<void> {
    if (this.attempts === 0) return Promise.resolve();
    return new Promise((resolve) => (this.attemptsDone = resolve));
  }

  drift(ttl: number): number {
    return this.store.drift?.(ttl) ?? 0;
  }

  /**
   * The one definition of a lease's validity: a lease of `ttl` ms sent at `sentAt` is surely
   * over in the store by then. `ttl` is what was sent, which may be shorter than the option
   * (`maxHold`, `extend(shorter)`).
   */
  leaseEnd(sentAt: number, ttl: number): number {
    return sentAt + ttl - this.drift(ttl);
  }

  /** Subscribers hear events outside the async context of whichever caller caused them. */
  emit(event: LockEvent): void {
    if (this.bus.observed) inLibraryScope(() => this.bus.next(event));
  }
}

/** Why an acquire fails once shutdown has begun. */
export function shutDown(key: string | undefined): LockShutdownError {
  return new LockShutdownError(key, 'no new locks are granted.');
}

/** The reason a held lock's `signal` aborts with at shutdown. */
export function stopWork(key: string): LockShutdownError {
  return new LockShutdownError(
    key,
    'stop the work this lock protects. The lock is released when it ends, never while it runs.',
  );
}

/**
 * The acquirer's table of the keys this process is busy with: a `Map` from key to a slot
 * number, and the entries in an array of slots that are cleared and reused.
 *
 * Why not a `Map` of the entries themselves: most locks set and delete an entry, and such a
 * `Map` rebuilds its table every few entries. V8 puts the new table of a long-lived `Map` in the
 * old generation and keeps the old one, with every entry it held, until the next full GC, so
 * each young collection kept the entries of locks long released and moved them to the old
 * generation, several times what a raw client promotes (see "Design decisions these figures
 * rest on" in bench/RESULTS.md). Slot numbers are small integers, which hold nothing, and a
 * cleared slot lets its entry go.
 */
export class BusyKeys<V extends object> {
  private readonly slotOf = new Map<string, number>();
  private readonly slots: (V | undefined)[] = [];
  private readonly freeSlots: number[] = [];

  get size(): number {
    return this.slotOf.size;
  }

  get(key: string): V | undefined {
    const slot = this.slotOf.get(key);
    return slot === undefined ? undefined : this.slots[slot];
  }

  set(key: string, entry: V): void {
    const slot = this.slotOf.get(key);
    if (slot !== undefined) {
      this.slots[slot] = entry;
      return;
    }
    const free = this.freeSlots.length > 0 ? this.freeSlots.pop()! : this.slots.length;
    this.slots[free] = entry;
    this.slotOf.set(key, free);
  }

  /** Drops `key` if its entry is still `entry` (another may have taken its place). */
  deleteIf(key: string, entry: V): void {
    const slot = this.slotOf.get(key);
    if (slot === undefined || this.slots[slot] !== entry) return;
    this.slotOf.delete(key);
    this.slots[slot] = undefined;
    this.freeSlots.push(slot);
    // After a burst of many keys at once, let the grown arrays go.
    if (this.slotOf.size === 0 && this.slots.length > 1024) {
      this.slots.length = 0;
      this.freeSlots.length = 0;
    }
  }

  values(): V[] {
    return [...this.slotOf.values()].map((slot) => this.slots[slot]!);
  }
}

/**
 * One queue per set of keys (in the caller's order), per kind (and limit) and per engine. Readers and
 * writers of one key queue apart: the store decides between them.
 */
export function queueKey({
  fullKeys,
  kind,
}: {
  fullKeys: readonly string[];
  kind: LockKind;
}): string {
  if (kind.type === 'semaphore') return `${fullKeys[0]}\nsemaphore ${kind.limit}`;
  if (kind.type !== 'mutex') return `${fullKeys[0]}\n${kind.type}`;
  return fullKeys.length === 1 ? fullKeys[0] : fullKeys.join('\n');
}
