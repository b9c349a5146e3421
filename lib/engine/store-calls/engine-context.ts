import type { ResolvedLockOptions } from '../request/lock-options.interface.js';
import type { LockKind, LockStore } from '../../stores/lock-store.interface.js';
import { MUTEX } from '../request/lock-request.js';
import { LockOptionsError, LockShutdownError } from '../../errors/lock.errors.js';
import { Subject } from 'rxjs';
import type { LockEvent, StoreOperation } from '../lock.events.js';
import { CallDeadlines, callStore, type CallHooks } from './store-call.js';
import { inLibraryScope } from '../../stores/library-scope.js';
import { StoreHealthMonitor } from './store-health-monitor.js';

/*
 * What the engine's parts share: its configuration, the event stream, and bounded store calls
 * with the store's health.
 */

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
    this.store = config.store;
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

  readonly store: LockStore;

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

  /** Acquire attempts sent and not yet answered: shutdown waits for them (see `sendAttempt`). */
  attemptsOut = 0;
  /** Set while shutdown waits: called once the last attempt out is answered. */
  attemptsDone?: () => void;

  /** Resolves once every attempt sent has its answer (or failed). */
  attemptsAnswered(): Promise<void> {
    if (this.attemptsOut === 0) return Promise.resolve();
    return new Promise((resolve) => (this.attemptsDone = resolve));
  }

  /**
   * Checks the store once, at startup: that it answers (if not, says so: the app still starts),
   * its own configuration (e.g. WAIT for `replicas`), and the eviction policy (or that it is unread).
   */
  async checkStore(): Promise<void> {
    const { store, health, deadlines } = this;
    try {
      await callStore(Promise.resolve(store.init?.()), undefined, 'ping', deadlines);
      await callStore(store.ping(), undefined, 'ping', deadlines);
    } catch (error) {
      // A setting the store refuses fails bootstrap. An unreachable store does not: calls fail
      // fast until it answers, and its return is told.
      if (error instanceof LockOptionsError) throw error;
      return health.failedAtStartup(error as Error);
    }
    await health.checkEviction(store, deadlines.ms);
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
