import {
  LockBusyError,
  LockLostError,
  LockOptionsError,
  LockStoreRefusedError,
} from '../errors/lock.errors.js';
import type { LockOptions, OnLost, WithLockOptions } from './request/lock-options.interface.js';
import { checkOnLost, isPlainObject } from './request/lock-options.validation.js';
import { innermostFrame, lossOf, runHoldingLock } from './hold/held-lock.js';
import { EngineContext, shutDown, type LockEngineConfig } from './store-calls/engine-context.js';
import { BusyKeys, LockAcquirer } from './acquire/lock-acquirer.js';
import type { KeyEntry } from './acquire/key-queues.js';
import { type LockEvent, traceAcquire, tracing } from './lock.events.js';
import type { Lock } from './lock.interface.js';
import { LockLeases } from './hold/lock-leases.js';
import { describeKind, prepareLockRequest, type LockRequest } from './request/lock-request.js';
import { NestedLock, reentry } from './hold/nested-lock.js';
import type { LockStore, ReleaseResult } from '../stores/lock-store.interface.js';
import type { Observable } from 'rxjs';
import { LockInspections, waitersIn } from './lock-inspections.js';

export type { LockEngineConfig } from './store-calls/engine-context.js';

/** With the instance id its process registers as the owner of its locks (see `inspections`). */
export type LockEngineSettings = LockEngineConfig & { readonly instanceId?: string };

/**
 * The lock engine: acquiring with a local FIFO queue per key, renewal, reentrancy, release and
 * shutdown, over any `LockStore`. Plain TypeScript; the Nest face wraps it.
 */
export class LockEngine {
  private readonly context: EngineContext;
  private readonly leases: LockLeases;
  private readonly acquirer: LockAcquirer;
  readonly events$: Observable<LockEvent>;
  private stopped?: Promise<void>;
  private closing?: Promise<void>;
  /** `inspect`, `list` and `forceRelease`, over the store's inspector, in the caller's key names. */
  readonly inspections: LockInspections;
  private unregister?: () => Promise<void>;

  constructor(private readonly config: LockEngineSettings) {
    this.context = new EngineContext(config);
    const busyKeys = new BusyKeys<KeyEntry>();
    this.leases = new LockLeases(this.context, busyKeys);
    const { store, keyPrefix, storeTimeout } = config;
    this.inspections = new LockInspections(store, keyPrefix, storeTimeout, {
      waiters: waitersIn(busyKeys),
      forced: (key, token) => this.leases.forcedRelease(key, token),
    });
    this.acquirer = new LockAcquirer(this.context, this.leases.parts, busyKeys);
    this.events$ = this.context.bus.asObservable();
  }

  /** The store the locks are taken in. */
  get store(): LockStore {
    return this.context.store;
  }

  /** Number of locks held through this engine (nested acquisitions not counted). */
  get heldCount(): number {
    return this.leases.size;
  }

  /** @internal Bookkeeping sizes, for leak checks in tests. */
  stats(): { queues: number; held: number } {
    return { queues: this.acquirer.queueCount, held: this.leases.size };
  }

  // Not async: every await between a release and the next holder's code delays the hand-off.
  acquire(key: string | readonly string[], options?: LockOptions): Promise<Lock> {
    try {
      return this.acquireRequest(this.prepare(key, options));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async tryAcquire(
    key: string | readonly string[],
    options?: LockOptions,
  ): Promise<Lock | undefined> {
    const request = this.prepare(key, options);
    try {
      return await this.acquireRequest({ ...request, options: { ...request.options, wait: 0 } });
    } catch (error) {
      if (error instanceof LockBusyError) return undefined;
      throw error;
    }
  }

  async withLock<T>(
    key: string | readonly string[],
    fn: (lock: Lock) => T | Promise<T>,
    options?: WithLockOptions<T>,
  ): Promise<T> {
    const given = isPlainObject(options);
    const { onLost = 'throw', ...lockOptions } = given ? options : {};
    // Anything but an object is refused by `prepare`, as `acquire` refuses it.
    const request = this.prepare(key, given ? lockOptions : options);
    checkOnLost(onLost, request.label);
    const lock = await this.acquireRequest(request);
    return holdWhile(
      lock,
      () => runHoldingLock(this, lock, request.fullKeys, () => fn(lock)),
      onLost,
    );
  }

  /** Validates a key and options (unless `optionsChecked`) for this engine. Throws, never calls the store. */
  prepare(key: unknown, options?: LockOptions, optionsChecked = false): LockRequest {
    const { config, store } = this.context;
    const { keyPrefix, defaults } = config;
    const request = prepareLockRequest(key, options, keyPrefix, defaults, optionsChecked);
    if (request.options.fencing && store.supportsFencing === false) {
      throw new LockOptionsError(
        `Lock "${request.label}": this store cannot issue safe fencing tokens (Redlock has no single ` +
          'monotonic counter). Use a single Redis (or Sentinel) store for fenced locks.',
        request.label,
      );
    }
    const { type } = request.kind;
    if (type !== 'mutex' && !store.kinds?.includes(type)) {
      throw new LockOptionsError(
        `Lock "${request.label}": this store cannot lock ${describeKind(request.kind)}` +
          ' (Redlock offers the mutex only). Use a single Redis, Sentinel or Cluster store.',
        request.label,
      );
    }
    store.checkKeys?.(request.fullKeys);
    return request;
  }

  /**
   * Takes a validated request; returns a nested handle when the call chain holds the keys.
   * Traced on the `nestjs-distributed-lock:acquire` channel (see lock.events.ts).
   */
  acquireRequest(request: LockRequest): Promise<Lock> {
    if (!tracing.acquires.hasSubscribers) return this.take(request);
    return traceAcquire(
      { key: request.label, kind: request.kind, wait: request.options.wait },
      () => this.take(request),
      (lock) => lock instanceof NestedLock,
    );
  }

  private take(request: LockRequest): Promise<Lock> {
    const innermost = innermostFrame();
    return (innermost && reentry(innermost, this, request)) || this.acquirer.take(request);
  }

  /** Runs `fn` with `lock` recorded as held by the call chain. */
  runHolding<T>(lock: Lock, fullKeys: readonly string[], fn: () => T): T {
    return runHoldingLock(this, lock, fullKeys, fn);
  }

  /** Registers this process as the owner of its locks, and checks the store (`checkStore`). */
  async init(): Promise<void> {
    // First, whatever the checks find: a store that does not answer yet gets it when it is back.
    this.unregister ??= this.inspections.register(this.config.instanceId);
    await this.context.checkStore();
  }

  /** The calls the store refused in the last minute, one error per kind (for health). */
  get storeRefusals(): ReturnType<EngineContext['health']['recentRefusals']> {
    return this.context.health.recentRefusals();
  }

  /**
   * Starts shutdown: no new locks, pending waits fail and every held lock's `signal` aborts, with
   * `LockShutdownError`. `close()` does it too; the Nest face calls it first, before the HTTP
   * server waits for its requests, so that sections hear of the shutdown at once.
   */
  beginShutdown(): void {
    if (this.context.closed) return;
    this.context.closed = true;
    // Attempts already sent come back to a closed engine, which gives their wins back.
    this.stopped = this.acquirer.stop(shutDown(undefined));
    this.leases.abortAll();
  }

  /**
   * Shuts down (see `beginShutdown`), waits up to `shutdownTimeout` for every held lock to be
   * released, leaves the rest to expire, and lets go of the store.
   */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    this.beginShutdown();
    await this.stopped;
    await this.leases.drain(this.context.config.shutdownTimeout);
    await this.context.deadlines.settled();
    await this.unregister?.();
    await this.context.config.closeStore();
    this.context.bus.complete();
  }
}

/**
 * Runs `fn` while `lock` is held, releases the lock, and settles with `fn`'s outcome unless the
 * lock was lost meanwhile: then as `onLost` says.
 */
export async function holdWhile<T>(
  lock: Lock,
  fn: () => T | Promise<T>,
  onLost: OnLost<T>,
): Promise<T> {
  let outcome: { readonly result?: T; readonly cause?: unknown };
  try {
    outcome = { result: await fn() };
  } catch (error) {
    outcome = { cause: error };
  }
  // The work is done; a release the store cannot confirm still ends when the lease does. One it
  // refused for good (an ACL without EVALSHA, say) leaves the key for its whole lease: the
  // caller is told, though the code ran.
  let released: ReleaseResult | undefined;
  let refused: LockStoreRefusedError | undefined;
  try {
    released = await lock.release();
  } catch (error) {
    if (error instanceof LockStoreRefusedError) refused = error;
  }
  const lost = onLost === 'ignore' ? undefined : lossOf(lock, released);
  if (lost && onLost !== 'ignore') {
    const error = new LockLostError(lock.key, lost.reason, outcome);
    if (onLost === 'throw') throw error;
    return onLost(error);
  }
  if ('cause' in outcome) throw outcome.cause;
  if (refused) throw refused.afterRun(outcome.result);
  return outcome.result as T;
}
