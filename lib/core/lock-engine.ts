import {
  LockBusyError,
  LockLostError,
  LockOptionsError,
  LockStoreError,
  type LockLossReason,
} from '../errors/lock.errors.js';
import type { LockOptions, ResolvedLockOptions } from '../interfaces/lock-options.interface.js';
import type { LockStore, NodeOutcome, ReleaseResult } from '../stores/lock-store.interface.js';
import { HeldLock, type LeaseKeeper } from './held-lock.js';
import { LeaseWatchdog } from './lease-watchdog.js';
import { findHeldLock, heldKeys, runHoldingLock } from './lock-context.js';
import { LockEventBus, type LockEvent } from './lock.events.js';
import type { Lock } from './lock.interface.js';
import { prepareLockRequest, type LockRequest } from './lock-request.js';
import { MAX_TTL, validateLockOptions } from './lock-options.validation.js';
import { newLockToken } from './lock-token.js';
import { NestedLock } from './nested-lock.js';
import { callStore } from './store-call.js';
import { WaitQueue, type AttemptOutcome, type Grant, type Waiter } from './wait-queue.js';

export interface LockEngineConfig {
  readonly store: LockStore;
  readonly keyPrefix: string;
  readonly defaults: ResolvedLockOptions;
  /** Longest a single store call may take before it fails with `LockStoreError`. */
  readonly storeTimeout: number;
  /** Longest sleep of a waiter that gets no release notification. */
  readonly pollCap: number;
  /** Status code carried by `LockBusyError`. */
  readonly busyStatusCode: number;
  /** Lets go of the store on `close()`: closes what the module created, leaves the user's open. */
  readonly closeStore: () => Promise<void>;
}

type StoreOperation = Extract<LockEvent, { type: 'error' }>['operation'];

/**
 * The lock engine: acquiring with a local FIFO queue per key, renewal, reentrancy, release and
 * shutdown, over any `LockStore`. Plain TypeScript; the Nest face wraps it.
 */
export class LockEngine implements LeaseKeeper {
  private readonly bus = new LockEventBus();
  readonly events$ = this.bus.events$;
  private readonly queues = new Map<string, WaitQueue>();
  private readonly held = new Map<HeldLock, WaitQueue>();
  private readonly watchdog: LeaseWatchdog;
  /** The per-node answers of a request's last failed attempt, for its `LockBusyError`. */
  private readonly lastNodes = new WeakMap<LockRequest, readonly NodeOutcome[]>();
  /** Acquire attempts sent and not yet answered; `close()` waits for them. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly config: LockEngineConfig) {
    this.watchdog = new LeaseWatchdog({
      extend: (leases) => this.storeCall(config.store.extend(leases), undefined, 'extend'),
      renewed: (lease, ttl) => this.emit({ type: 'renewed', key: (lease as HeldLock).key, ttl }),
      lost: (lease, reason) => this.lose(lease as HeldLock, reason),
      failed: () => undefined,
      drift: (ttl) => this.drift(ttl),
    });
  }

  /** Number of locks held through this engine (nested acquisitions not counted). */
  get heldCount(): number {
    return this.held.size;
  }

  async acquire(key: string | readonly string[], options?: LockOptions): Promise<Lock> {
    return this.acquireRequest(this.prepare(key, options));
  }

  /** Validates a key and options against this engine's prefix and defaults. Throws, never calls the store. */
  prepare(key: unknown, options?: LockOptions): LockRequest {
    const request = prepareLockRequest(key, options, this.config.keyPrefix, this.config.defaults);
    const { store } = this.config;
    if (request.options.fencing && store.supportsFencing === false) {
      throw new LockOptionsError(
        `Lock "${request.label}": this store cannot issue safe fencing tokens (Redlock has no single ` +
          'monotonic counter). Use a single Redis (or Sentinel) store for fenced locks.',
        request.label,
      );
    }
    store.checkKeys?.(request.fullKeys);
    return request;
  }

  /** Lets the store check its configuration once, at startup. */
  async init(): Promise<void> {
    await this.config.store.init?.();
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
    options?: LockOptions,
  ): Promise<T> {
    const request = this.prepare(key, options);
    const lock = await this.acquireRequest(request);
    try {
      return await runHoldingLock(this, lock, request.fullKeys, () => fn(lock));
    } finally {
      // The work is done; a release the store cannot confirm still ends when the lease does.
      await lock.release().catch(() => undefined);
    }
  }

  /** Takes a validated request; returns a nested handle when the call chain holds the keys. */
  async acquireRequest(request: LockRequest): Promise<Lock> {
    const outer = findHeldLock(this, request.fullKeys);
    if (outer) return new NestedLock(outer);
    const held = heldKeys(this);
    const overlap = request.fullKeys.filter((key) => held.has(key));
    // Waiting for the rest while holding part would deadlock on our own keys.
    if (overlap.length > 0) throw partialReentry(request, overlap.length);
    return this.take(request);
  }

  /** Runs `fn` with `lock` recorded as held by the call chain. */
  runHolding<T>(lock: Lock, fullKeys: readonly string[], fn: () => T): T {
    return runHoldingLock(this, lock, fullKeys, fn);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const queue of this.queues.values()) queue.failAll(shutDown(undefined));
    // Attempts already sent come back to a closed engine, which gives their wins back.
    await Promise.allSettled([...this.inFlight]);
    this.watchdog.stop();
    await Promise.allSettled([...this.held.keys()].map((lock) => lock.release()));
    await this.config.closeStore();
    this.bus.complete();
  }

  private async take(request: LockRequest): Promise<Lock> {
    const { signal, wait } = request.options;
    signal?.throwIfAborted();
    if (this.closed) throw shutDown(request.label);
    const queue = this.queueFor(request);
    if (wait === 0 && queue.heldHere) throw this.busy(request);
    if (wait > 0 && !queue.free) return this.enqueue(request, queue, false);
    queue.beginOutsideAttempt();
    let outcome: AttemptOutcome;
    try {
      outcome = await this.attempt(request);
    } catch (error) {
      queue.endOutsideAttempt(false);
      throw error;
    }
    if ('grant' in outcome) {
      queue.endOutsideAttempt(true);
      return this.hold(request, queue, outcome.grant);
    }
    if (this.bus.listening)
      this.emit({ type: 'contended', key: request.label, pttl: outcome.pttl });
    if (wait === 0) {
      queue.endOutsideAttempt(false);
      throw this.busy(request);
    }
    const waiting = this.enqueue(request, queue, true);
    queue.endOutsideAttempt(false);
    return waiting;
  }

  private enqueue(request: LockRequest, queue: WaitQueue, first: boolean): Promise<Lock> {
    const { wait, signal } = request.options;
    if (this.closed) return Promise.reject(shutDown(request.label));
    return new Promise<Lock>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (): void => {
        waiter.settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const giveUp = (error: unknown): void => {
        if (waiter.settled) return;
        finish();
        queue.withdraw(waiter);
        reject(error);
      };
      const onAbort = (): void => giveUp(signal!.reason);
      const waiter: Waiter & { settled: boolean } = {
        settled: false,
        attempt: () => this.attempt(request),
        deliver: (grant) => {
          finish();
          try {
            resolve(this.hold(request, queue, grant));
          } catch (error) {
            reject(error);
          }
        },
        fail: (error) => {
          finish();
          reject(error);
        },
      };
      const remaining = request.startedAt + wait - performance.now();
      if (remaining < MAX_TTL)
        timer = setTimeout(() => giveUp(this.busy(request)), Math.max(1, remaining));
      // The signal may have fired while the first attempt was in flight: no event comes then.
      if (signal?.aborted) return giveUp(signal.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.enqueue(waiter, first);
    });
  }

  private attempt(request: LockRequest): Promise<AttemptOutcome> {
    const attempt = this.attemptOnce(request);
    this.inFlight.add(attempt);
    return attempt.finally(() => this.inFlight.delete(attempt));
  }

  private async attemptOnce(request: LockRequest): Promise<AttemptOutcome> {
    const { ttl, maxHold, fencing } = request.options;
    const token = newLockToken();
    const startedAt = performance.now();
    const { store } = this.config;
    const result = await this.storeCall(
      store.tryAcquire({
        keys: request.fullKeys,
        token,
        ttl: Math.min(ttl, maxHold ?? ttl),
        fencing,
      }),
      request.label,
      'acquire',
      (late) => {
        if (late.acquired) store.release(request.fullKeys, token).catch(() => undefined);
      },
    );
    if (!result.acquired) {
      if (result.nodes) this.lastNodes.set(request, result.nodes);
      return { pttl: result.pttl };
    }
    const expiresAt = startedAt + ttl - this.drift(ttl);
    return { grant: { token, fences: result.fences, startedAt, expiresAt } };
  }

  private drift(ttl: number): number {
    return this.config.store.drift?.(ttl) ?? 0;
  }

  private hold(request: LockRequest, queue: WaitQueue, grant: Grant): Lock {
    const { options } = request;
    if (this.closed) {
      queue.holderLeft(false);
      this.config.store.release(request.fullKeys, grant.token).catch(() => undefined);
      throw shutDown(request.label);
    }
    const lock = new HeldLock(this, {
      key: request.label,
      keys: request.names,
      fullKeys: request.fullKeys,
      token: grant.token,
      fences: grant.fences,
      ttl: options.ttl,
      autoRenew: options.autoRenew,
      startedAt: grant.startedAt,
      expiresAt: grant.expiresAt,
      holdUntil: options.maxHold === undefined ? Infinity : grant.startedAt + options.maxHold,
    });
    this.held.set(lock, queue);
    this.watchdog.add(lock);
    if (this.bus.listening) {
      const waited = performance.now() - request.startedAt;
      this.emit({ type: 'acquired', key: lock.key, waited, fence: lock.fence });
    }
    if (options.signal?.aborted) {
      void lock.release().catch(() => undefined);
      throw options.signal.reason;
    }
    return lock;
  }

  async releaseLease(lock: HeldLock): Promise<ReleaseResult> {
    // Sent before the next local waiter is woken, so its attempt queues behind this release on
    // the same connection: the hand-off costs one round trip, not two.
    const pending = this.storeCall(
      this.config.store.release(lock.fullKeys, lock.token),
      lock.key,
      'release',
    );
    const queue = this.held.get(lock);
    if (lock.markReleased()) this.forget(lock, 'released');
    const { result, waitersElsewhere } = await pending;
    queue?.noteRelease(waitersElsewhere);
    if (this.bus.listening) {
      this.emit({
        type: 'released',
        key: lock.key,
        held: performance.now() - lock.acquiredAt,
        result,
      });
    }
    return result;
  }

  async extendLease(lock: HeldLock, ttl: number): Promise<void> {
    if (ttl !== lock.ttl) validateLockOptions({ ttl }, `Extending lock "${lock.key}"`);
    const sentAt = performance.now();
    const lease = { keys: lock.fullKeys, token: lock.token, ttl };
    const [result] = await this.storeCall(this.config.store.extend([lease]), lock.key, 'extend');
    if (result !== 'extended') {
      this.lose(lock, result);
      throw new LockLostError(lock.key, result);
    }
    lock.expiresAt = Math.max(lock.expiresAt, sentAt + ttl - this.drift(ttl));
    this.watchdog.touch(lock);
    this.emit({ type: 'renewed', key: lock.key, ttl });
  }

  private lose(lock: HeldLock, reason: LockLossReason): void {
    if (!lock.markLost(reason)) return;
    this.forget(lock);
    // Keys of a multi-key lock that are still ours would otherwise live on for a whole lease.
    if (lock.fullKeys.length > 1) {
      this.config.store.release(lock.fullKeys, lock.token).catch(() => undefined);
    }
    const held = performance.now() - lock.acquiredAt;
    if (!lock.autoRenew && reason === 'expired')
      this.emit({ type: 'expired', key: lock.key, held });
    else this.emit({ type: 'lost', key: lock.key, held, reason });
  }

  private forget(lock: HeldLock, how: 'released' | 'lost' = 'lost'): void {
    const queue = this.held.get(lock);
    this.held.delete(lock);
    this.watchdog.delete(lock);
    queue?.holderLeft(how === 'released');
  }

  private queueFor(request: LockRequest): WaitQueue {
    const id = request.fullKeys.join('\n');
    let queue = this.queues.get(id);
    if (!queue) {
      queue = new WaitQueue({
        subscribe: (onRelease) => this.subscribe(request, onRelease),
        discard: (grant) => {
          this.config.store.release(request.fullKeys, grant.token).catch(() => undefined);
        },
        idle: () => {
          if (this.queues.get(id) === queue) this.queues.delete(id);
        },
        pollCap: this.config.pollCap,
      });
      this.queues.set(id, queue);
    }
    return queue;
  }

  private async subscribe(request: LockRequest, onRelease: () => void): Promise<() => void> {
    const { store } = this.config;
    const results = await Promise.allSettled(
      request.fullKeys.map((key) =>
        // A subscription confirmed after the timeout must still be undone, or it leaks.
        this.storeCall(store.subscribe(key, onRelease), request.label, 'subscribe', (late) =>
          late(),
        ),
      ),
    );
    const unsubscribes = results.flatMap((result) =>
      result.status === 'fulfilled' ? [result.value] : [],
    );
    const unsubscribeAll = (): void => unsubscribes.forEach((unsubscribe) => unsubscribe());
    const failure = results.find((result) => result.status === 'rejected');
    if (failure) {
      unsubscribeAll();
      throw failure.reason;
    }
    return unsubscribeAll;
  }

  private busy(request: LockRequest): LockBusyError {
    const waited = performance.now() - request.startedAt;
    if (this.bus.listening) this.emit({ type: 'busy', key: request.label, waited });
    return new LockBusyError(
      request.label,
      waited,
      this.config.busyStatusCode,
      this.lastNodes.get(request),
    );
  }

  private storeCall<T>(
    operation: Promise<T>,
    key: string | undefined,
    what: StoreOperation,
    late?: (result: T) => void,
  ): Promise<T> {
    return callStore(operation, key, what, this.config.storeTimeout, late).catch((error: Error) => {
      this.emit({ type: 'error', key, operation: what, error });
      throw error;
    });
  }

  private emit(event: LockEvent): void {
    if (this.bus.listening) this.bus.emit(event);
  }
}

function shutDown(key: string | undefined): LockStoreError {
  return new LockStoreError(key, 'the lock service is shutting down; no new locks are granted.');
}

function partialReentry(request: LockRequest, overlapping: number): LockOptionsError {
  return new LockOptionsError(
    `Lock "${request.label}": this call chain already holds ${overlapping} of its ${request.names.length} ` +
      'keys in another lock. Take all the keys in the outer lock, or release it first.',
    request.label,
  );
}
