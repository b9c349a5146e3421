import type { ResolvedLockOptions } from './request/lock-options.interface.js';
import type { LockKind, LockStore } from '../stores/lock-store.interface.js';
import { MUTEX } from './request/lock-request.js';
import { LockShutdownError, type LockError } from '../errors/lock.errors.js';
import { LockEventBus, type LockEvent, type StoreEvent } from './lock.events.js';
import { CallDeadlines } from './store-calls/store-call.js';
import { callStore, type CallHooks, type StoreOperation } from './store-calls/store-call.js';
import { inLibraryScope } from '../stores/library-scope.js';

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
  readonly bus = new LockEventBus();
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
    if (this.bus.listening) inLibraryScope(() => this.bus.emit(event));
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

/** Where store events go: the event stream, and the operator's log. */
export interface StoreEventSink {
  emit(event: LockEvent): void;
  log(event: StoreEvent): void;
}

/**
 * Follows whether the store answers, so that an outage is told once when it begins and once
 * when it ends, however many calls fail in between. A call the store refused with an error
 * reply (out of memory, a script error) is a failure, but the store is up.
 */
export class StoreHealthMonitor {
  private downSince?: number;

  constructor(
    private readonly sink: StoreEventSink,
    private readonly endpoint: string | undefined,
  ) {}

  get down(): boolean {
    return this.downSince !== undefined;
  }

  failed(error: LockError, key: string | undefined, what: StoreOperation): void {
    this.sink.emit({ type: 'error', key, operation: what, error });
    if (this.downSince === undefined && !isErrorReply(error)) this.wentDown(error, false);
  }

  answered(): void {
    if (this.downSince === undefined) return;
    const downFor = performance.now() - this.downSince;
    this.downSince = undefined;
    this.tell({ type: 'store-up', endpoint: this.endpoint, downFor });
  }

  /** The startup check found the store not answering. */
  unreachableAtStartup(error: Error): void {
    if (this.downSince === undefined) this.wentDown(error, true);
  }

  /** The startup check found a setting that can lose locks. */
  unsafeEviction(policy: string): void {
    this.tell({ type: 'unsafe-eviction', endpoint: this.endpoint, policy });
  }

  private wentDown(error: Error, atStartup: boolean): void {
    this.downSince = performance.now();
    this.tell({ type: 'store-down', endpoint: this.endpoint, error, atStartup });
  }

  private tell(event: StoreEvent): void {
    this.sink.log(event);
    this.sink.emit(event);
  }
}

/** Failures in which the store answered: it is reachable. */
const ANSWERED_FAILURES = new Set([
  'ReplyError', // ioredis: an error reply (out of memory, a script error)
  'ReplicasBehindError', // the Redis store: too few replicas acknowledged a grant
]);

function isErrorReply(error: Error): boolean {
  return ANSWERED_FAILURES.has((error.cause as Error | undefined)?.name ?? '');
}
