import { LockLostError, type LockError, type LockLossReason } from '../../errors/lock.errors.js';
import type { LockKind, ReleaseResult } from '../../stores/lock-store.interface.js';
import type { WatchedLease } from './watched-lease.js';
import type { Lock } from '../lock.interface.js';
import type { LockRequest } from '../request/lock-request.js';
import type { WaitQueue } from '../wait/wait-queue.js';
import type { Grant } from '../wait/wait.types.js';

/** What a held lock asks of the engine that created it. */
export interface LeaseKeeper {
  releaseLease(lock: HeldLock): Promise<ReleaseResult>;
  extendLease(lock: HeldLock, ttl: number): Promise<void>;
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
    private readonly keeper: LeaseKeeper,
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
    return this.keeper.extendLease(this, ttl);
  }

  release(): Promise<ReleaseResult> {
    this.releasing ??= this.keeper.releaseLease(this);
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
