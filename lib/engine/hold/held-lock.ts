import { LockLostError, type LockError, type LockLossReason } from '../../errors/lock.errors.js';
import type { WatchedLease } from './watched-lease.js';
import type { LeaseWatchdog } from './lease-watchdog.js';
import type { Lock } from '../lock.interface.js';
import type { WaitQueue } from '../wait/wait-queue.js';
import type { LockKind, ReleaseResult } from '../../stores/lock-store.interface.js';
import { shutDown, type EngineContext, type BusyKeys } from '../engine-context.js';
import type { LockRequest } from '../request/lock-request.js';
import type { Grant } from '../wait/wait.types.js';
import { isLate } from '../acquire/attempt-call.js';
import { lateGrantError } from '../acquire/refusals.js';
import { extendLock, releaseLock } from './lock-release.js';

/** The engine's parts a held lock uses to release, extend and end itself. */
export interface HoldParts {
  readonly context: EngineContext;
  /** Watches every held lock, so its list is the list of held locks. */
  readonly watchdog: LeaseWatchdog<HeldLock>;
  /** The acquirer's table, which holds a lock without a queue (see `HeldLock.queue`). */
  readonly busyKeys: BusyKeys<object>;
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
    if (grant.from) watchdog.delete(grant.from);
    queue?.holderLeft(false);
    context.giveBack(request.fullKeys, grant.token, request.kind);
    if (context.closed) throw shutDown(request.label);
    throw lateGrantError(request, performance.now() - grant.startedAt);
  }
  const lock = new HeldLock(parts, queue, request, grant);
  if (grant.from) watchdog.transfer(grant.from, lock);
  else watchdog.add(lock, grant.startedAt);
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
  /** Why `signal` aborted (or will, once made): the first of loss and shutdown. */
  private abortReason?: LockError;
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
      if (this.abortReason) this.controller.abort(this.abortReason);
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
    this.loss = new LockLostError(this.key, reason);
    this.abort(this.loss);
    return true;
  }

  /** Aborts `signal` without ending the lock (shutdown asks the holder to stop); the first reason stays. */
  abort(reason: LockError): void {
    if (this.abortReason) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }
}
