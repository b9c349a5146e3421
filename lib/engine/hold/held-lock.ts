import { AsyncLocalStorage } from 'node:async_hooks';
import {
  LockLostError,
  LockStoreRefusedError,
  type LockError,
  type LockLossReason,
} from '../../errors/lock.errors.js';
import type { WatchedLease } from './watched-lease.js';
import type { LeaseWatchdog } from './lease-watchdog.js';
import type { Lock } from '../lock.interface.js';
import type { WaitQueue } from '../wait/wait-queue.js';
import type { LockKind, ReleaseResult } from '../../stores/lock-store.interface.js';
import type { EngineContext } from '../engine-context.js';
import type { BusyKeys } from '../lock-engine.js';
import type { LockRequest } from '../request/lock-request.js';
import type { Grant } from '../wait/wait.types.js';
import { extendLock, releaseLock } from './lock-release.js';

/** The engine's parts a held lock uses to release, extend and end itself. */
export interface HoldParts {
  readonly context: EngineContext;
  /** Watches every held lock, so its list is the list of held locks. */
  readonly watchdog: LeaseWatchdog<HeldLock>;
  /** The acquirer's table, which holds a lock without a queue (see `HeldLock.queue`). */
  readonly busyKeys: BusyKeys<object>;
}

/** A lock this process holds in the store. */
export class HeldLock implements Lock, WatchedLease {
  readonly key: string;
  readonly keys: readonly string[];
  readonly kind: LockKind;
  readonly token: string;
  readonly fences?: readonly number[];
  readonly ttl: number;
  readonly autoRenew: boolean;
  readonly holdUntil: number;
  /** Release keeps the key until then (`minHold`), shortening the lease instead of deleting it. */
  readonly keepUntil: number;
  /** The store's keys (prefix applied). */
  readonly fullKeys: readonly string[];
  /** When the winning attempt was sent (`performance.now()`): the lease's start. */
  readonly acquiredAt: number;
  expiresAt: number;
  watch?: WatchedLease['watch'];
  private state: 'held' | 'released' | 'lost' = 'held';
  private releasing?: Promise<ReleaseResult>;
  /** Made on first use of `signal`: most locks are released without anyone listening. */
  private controller?: AbortController;
  /** Why `signal` aborted (or will, once made): shutdown, unless the lock was lost. */
  private abortReason?: LockError;
  /**
   * Why the lock was lost. Its error is made when first asked for: a stalled event loop can
   * see thousands of leases run out at once, and all of them must be told in one task.
   */
  private lossReason?: LockLossReason;
  private loss?: LockLostError;

  constructor(
    readonly parts: HoldParts,
    /**
     * The local queue of the lock's keys, which counts this lock as a holder. A lock taken while
     * nobody else here wanted its keys has none until somebody does (see `LockAcquirer`).
     */
    public queue: WaitQueue | undefined,
    { label, names, fullKeys, options, kind }: LockRequest,
    grant: Grant,
  ) {
    this.acquiredAt = grant.startedAt;
    this.key = label;
    this.keys = names;
    this.fullKeys = fullKeys;
    this.kind = kind;
    this.token = grant.token;
    this.fences = grant.fences;
    this.ttl = options.ttl;
    this.autoRenew = options.autoRenew;
    this.holdUntil = options.maxHold === undefined ? Infinity : grant.startedAt + options.maxHold;
    this.keepUntil = options.minHold === undefined ? 0 : grant.startedAt + options.minHold;
    this.expiresAt = Math.min(grant.expiresAt, this.holdUntil);
  }

  get fence(): number | undefined {
    return this.fences?.[0];
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      const reason = this.abortReason ?? this.lossError();
      if (reason) this.controller.abort(reason);
    }
    return this.controller.signal;
  }

  get isHeld(): boolean {
    return this.state === 'held' && performance.now() < this.expiresAt;
  }

  get lost(): boolean {
    return this.state === 'lost';
  }

  /** Released or lost: the engine no longer counts it. */
  get ended(): boolean {
    return this.state !== 'held';
  }

  remainingTime(): number {
    return this.state === 'held' ? Math.max(0, this.expiresAt - performance.now()) : 0;
  }

  extend(ttl = this.ttl): Promise<void> {
    if (this.state !== 'held') return Promise.reject(new LockLostError(this.key, 'expired'));
    return extendLock(this, ttl);
  }

  release(): Promise<ReleaseResult> {
    this.releasing ??= releaseLock(this);
    return this.releasing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  /** Why the lock was lost, once it was: the `LockLostError` its `signal` aborted with. */
  lossError(): LockLostError | undefined {
    if (this.lossReason !== undefined) this.loss ??= new LockLostError(this.key, this.lossReason);
    return this.loss;
  }

  /** Called by the engine: marks the lock released; false if it had already ended. */
  markReleased(): boolean {
    if (this.state !== 'held') return false;
    this.state = 'released';
    return true;
  }

  /** Called by the engine: marks the lock lost and aborts its signal; false if it had already ended. */
  markLost(reason: LockLossReason): boolean {
    if (this.state !== 'held') return false;
    this.state = 'lost';
    this.lossReason = reason;
    if (this.controller && !this.controller.signal.aborted) this.controller.abort(this.lossError());
    return true;
  }

  /**
   * A release answered before this lock's deadline found the key gone, or another owner's: it
   * was removed while held, after the lock had ended as released. Returns the loss, now its own.
   */
  foundLost(result: 'expired' | 'stolen'): LockLostError {
    this.lossReason ??= result === 'stolen' ? 'stolen' : 'vanished';
    const loss = this.lossError()!;
    if (this.controller && !this.controller.signal.aborted) this.controller.abort(loss);
    return loss;
  }

  /** Aborts `signal` without ending the lock (shutdown asks the holder to stop); the first reason stays. */
  abort(reason: LockError): void {
    if (this.abortReason || this.lossReason !== undefined) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }
}

// The locks a call chain holds, for reentrancy and `currentLock()`, and the code run holding one.

/** A lock a call chain holds, inside those it held before (`parent`). */
export interface HeldFrame {
  readonly owner: object;
  readonly lock: Lock;
  readonly fullKeys: readonly string[];
  readonly parent: HeldFrame | undefined;
}

const storage = new AsyncLocalStorage<HeldFrame>();

/** Runs `fn` in a context that records `lock` as held, for reentrancy and `currentLock()`. */
export function runHoldingLock<T>(
  owner: object,
  lock: Lock,
  fullKeys: readonly string[],
  fn: () => T,
): T {
  return storage.run({ owner, lock, fullKeys, parent: storage.getStore() }, fn);
}

/** The innermost lock the current call chain holds (of any owner): most acquires run outside. */
export function innermostFrame(): HeldFrame | undefined {
  return storage.getStore();
}

/** The innermost lock held by the current call chain (set by `withLock` and `@DistributedLock`). */
export function currentLock(): Lock | undefined {
  return storage.getStore()?.lock;
}

/**
 * What a call that held a lock does when the lock was lost while its code ran: `'throw'` the
 * `LockLostError` (the code's own result or error rides on it), `'ignore'` the loss and keep
 * the code's outcome, or a function whose result is returned instead.
 */
export type OnLost<T = unknown> = 'throw' | 'ignore' | ((error: LockLostError) => T);

interface LossAware {
  lossError(): LockLostError | undefined;
}

/**
 * The loss `lock` suffered while held: its watchdog saw it lost, or its release found the key
 * expired or someone else's (a loss the watchdog had not yet seen).
 */
export function lossOf(lock: Lock, released: ReleaseResult | undefined): LockLostError | undefined {
  // A lock of this engine knows whether the release's answer was a loss (see `tellLoss`).
  const aware = lock as Partial<LossAware>;
  if (aware.lossError) return aware.lossError();
  if (released === 'expired' || released === 'stolen') return new LockLostError(lock.key, released);
  return undefined;
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
