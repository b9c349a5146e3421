import { AsyncLocalStorage } from 'node:async_hooks';
import { LockLostError, type LockError, type LockLossReason } from '../../errors/lock.errors.js';
import type { LockKind, ReleaseResult } from '../../stores/lock-store.interface.js';
import { traceExtend, traceRelease, tracing } from '../lock.events.js';
import type { Lock } from '../lock.interface.js';
import { validateLockOptions } from '../request/lock-options.validation.js';
import { isLate, queueKey, type LockRequest } from '../request/lock-request.js';
import { shutDown, type EngineContext } from '../store-calls/engine-context.js';
import { emitReleased, HandOffCall, ReleaseCall } from '../store-calls/lock-calls.js';
import { lateGrantError } from '../store-calls/refusals.js';
import type { WaitQueue } from '../wait/wait-queue.js';
import type { Grant, KeyTable } from '../wait/wait.types.js';
import type { LeaseWatchdog } from './lease-watchdog.js';
import { goneReason, renewalTtl, type WatchedLease } from './watched-lease.js';

/*
 * A lock this process holds: its lease's state and signal, how it is released (to a waiter here,
 * confirmed in the store, or in the store), extended and lost; and the locks a call chain holds,
 * for reentrancy and `currentLock()`.
 */

/** The engine's parts a held lock uses to release, extend and end itself. */
export interface HoldParts {
  readonly context: EngineContext;
  /** Watches every held lock, so its list is the list of held locks. */
  readonly watchdog: LeaseWatchdog<HeldLock>;
  /** The acquirer's table, which holds a lock without a queue (see `HeldLock.queue`). */
  readonly busyKeys: KeyTable;
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
    this.tellLoss(reason);
    return true;
  }

  /**
   * A release answered before this lock's deadline found the key gone, or another owner's: it
   * was removed while held, after the lock had ended as released. Returns the loss, now its own.
   */
  foundLost(result: 'expired' | 'stolen'): LockLostError {
    return this.tellLoss(result === 'stolen' ? 'stolen' : 'vanished');
  }

  private tellLoss(reason: LockLossReason): LockLostError {
    this.lossReason ??= reason;
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

/**
 * Turns a won attempt into a held lock of `queue` (which already counts it as a holder), if
 * any, watched from now on; a grant that aged past its lease, or came after shutdown, is given
 * back instead.
 */
export function holdLock(
  parts: HoldParts,
  request: LockRequest,
  queue: WaitQueue | undefined,
  grant: Grant,
): HeldLock {
  const { context, watchdog } = parts;
  // A grant checked when its answer came may still have aged in the ticks since.
  if (context.closed || isLate(grant)) {
    queue?.holderLeft(false);
    context.giveBack(request.fullKeys, grant.token, request.kind);
    if (context.closed) throw shutDown(request.label);
    throw lateGrantError(request, performance.now() - grant.startedAt);
  }
  const lock = new HeldLock(parts, queue, request, grant);
  watchdog.add(lock, grant.startedAt);
  if (context.bus.observed) {
    const waited = performance.now() - request.startedAt;
    context.emit({ type: 'acquired', key: lock.key, waited, fence: lock.fence });
  }
  const { signal } = request.options;
  if (signal?.aborted) {
    void lock.release().catch(() => undefined);
    throw signal.reason;
  }
  return lock;
}

// Releasing, extending and losing a held lock.

/**
 * Releases a held lock: to the next waiter here when one can take it, else in the store.
 * Traced on `nestjs-distributed-lock:release` (see lock.events.ts).
 */
export function releaseLock(lock: HeldLock): Promise<ReleaseResult> {
  if (!tracing.releases.hasSubscribers) return release(lock);
  const held = performance.now() - lock.acquiredAt;
  const { key, kind, fence } = lock;
  return traceRelease({ key, kind, fence, held }, () => release(lock));
}

/** Not async where it can be: each await between the store's answer and the caller is a tick. */
function release(lock: HeldLock): Promise<ReleaseResult> {
  // A lease past its deadline is lost before anything else is done with it, even when the
  // watchdog has not run since (an event loop too busy to renew it).
  lock.parts.watchdog.loseIfOverdue(lock);
  if (lock.keepUntil > 0 && !lock.ended) {
    const keep = lock.keepUntil - performance.now();
    if (keep >= 1) return keepForMinHold(lock, keep);
  }
  const queue = lock.ended ? undefined : lock.queue;
  const handOff = handOffLocally(lock, queue);
  if (handOff) return handOff;
  if (queue?.handedOff && !queue.waiting) return releaseAfterATick(lock, queue);
  return releaseInStore(lock, queue);
}

/**
 * A key hot in this process: the next request for it is often a tick away (the caller that
 * just handed it off, looping). Give it that tick before giving the key up.
 */
async function releaseAfterATick(lock: HeldLock, queue: WaitQueue): Promise<ReleaseResult> {
  await new Promise((resolve) => setImmediate(resolve));
  return handOffLocally(lock, queue) ?? releaseInStore(lock, queue);
}

/**
 * A release before `minHold` is over: the key stays for what is left of it (a shorter lease,
 * by the same compare-and-PEXPIRE as renewal), so the lock stays taken until then.
 */
async function keepForMinHold(lock: HeldLock, keep: number): Promise<ReleaseResult> {
  const { context } = lock.parts;
  if (lock.markReleased()) forget(lock, 'released');
  const { fullKeys: keys, token, kind } = lock;
  const lease = { keys, token, kind, ttl: Math.ceil(keep) };
  const [found] = await context.storeCall(context.store.extend([lease]), lock.key, 'release');
  const result = found === 'extended' ? 'released' : found;
  emitReleased(context, lock, result);
  return result;
}

function releaseInStore(lock: HeldLock, queue: WaitQueue | undefined): Promise<ReleaseResult> {
  const { context } = lock.parts;
  const call = new ReleaseCall(context, lock, queue);
  call.start(context.store.release(lock.fullKeys, lock.token, call.options), call.sentAt);
  if (lock.markReleased()) forget(lock, 'released');
  return call.promise;
}

/**
 * Hands the lease to the next waiter in this process when it can take it over: the key stays
 * set in the store under the same token, renewed for the waiter's own lease by one
 * compare-and-PEXPIRE, which also confirms that the store still holds it. A lease the store lost
 * (a forced release, a DEL, a restart) is thus never passed on: the releasing holder learns of
 * the loss instead, and the waiter tries in the store.
 */
function handOffLocally(
  lock: HeldLock,
  queue: WaitQueue | undefined,
): Promise<ReleaseResult> | undefined {
  const { context } = lock.parts;
  if (!queue?.waiting || context.closed || !lock.isHeld) return undefined;
  const next = queue.nextLocalHolder();
  if (!next || !lock.markReleased()) return undefined;
  const call = new HandOffCall(context, lock, queue, next);
  forget(lock, 'released');
  return call.promise;
}

/** A manual `extend`, traced on `nestjs-distributed-lock:extend`. */
export function extendLock(lock: HeldLock, ttl: number): Promise<void> {
  if (!tracing.extends.hasSubscribers) return extend(lock, ttl);
  return traceExtend({ keys: lock.fullKeys, ttl }, () => extend(lock, ttl));
}

async function extend(lock: HeldLock, ttl: number): Promise<void> {
  const { context, watchdog } = lock.parts;
  if (ttl !== lock.ttl) validateLockOptions({ ttl }, `Extending lock "${lock.key}"`);
  if (watchdog.loseIfOverdue(lock))
    throw lock.lossError() ?? new LockLostError(lock.key, 'expired');
  const sentAt = performance.now();
  if (sentAt >= lock.holdUntil) throw new LockLostError(lock.key, 'max-hold');
  const leaseTtl = renewalTtl(lock, sentAt, ttl);
  const sent = watchdog.extending(lock, sentAt, leaseTtl);
  const lease = { keys: lock.fullKeys, token: lock.token, kind: lock.kind, ttl: leaseTtl };
  const [result] = await context.storeCall(context.store.extend([lease]), lock.key, 'extend');
  if (result !== 'extended') {
    const reason = goneReason(result!);
    loseLock(lock, reason);
    throw lock.lossError() ?? new LockLostError(lock.key, reason);
  }
  watchdog.extended(lock, sent, sentAt, leaseTtl);
  context.emit({ type: 'renewed', key: lock.key, ttl: leaseTtl });
}

/** The lock is gone from the store, or its local deadline passed: it ends, loudly. */
export function loseLock(lock: HeldLock, reason: LockLossReason): void {
  if (!lock.markLost(reason)) return;
  forget(lock, 'lost');
  const { context } = lock.parts;
  // Keys of a multi-key lock that are still ours would otherwise live on for a whole lease.
  if (lock.fullKeys.length > 1) context.giveBack(lock.fullKeys, lock.token);
  const held = performance.now() - lock.acquiredAt;
  if (!lock.autoRenew && reason === 'expired') {
    context.emit({ type: 'expired', key: lock.key, held });
  } else {
    const lost = { type: 'lost', key: lock.key, held, reason } as const;
    context.emit(lost);
    context.config.log?.(lost);
  }
}

function forget(lock: HeldLock, how: 'released' | 'lost'): void {
  const { watchdog, busyKeys } = lock.parts;
  watchdog.delete(lock);
  if (lock.queue) lock.queue.holderLeft(how === 'released');
  else busyKeys.deleteIf(queueKey(lock), lock);
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
