import { LockLostError, type LockError, type LockLossReason } from '../../errors/lock.errors.js';
import type { WatchedLease } from './watched-lease.js';
import type { Lock } from '../lock.interface.js';
import type { WaitQueue } from '../wait/wait-queue.js';
import type {
  LockKind,
  ReleaseOptions,
  ReleaseReport,
  ReleaseResult,
} from '../../stores/lock-store.interface.js';
import type { EngineContext } from '../engine-context.js';
import { newLockToken, type LockRequest } from '../request/lock-request.js';
import { StoreCall } from '../store-calls/store-call.js';
import type { Grant, Waiter } from '../wait/wait.types.js';
import { isLate } from '../acquire/attempt-call.js';

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

/** A successor lease: the lease a release sets for the next waiter here, in the same call. */
export type Successor = NonNullable<ReleaseOptions['successor']>;

/**
 * One release in flight. When this process still wants the key, it keeps the process's place
 * in the store's line, or hands the key straight to the next waiter here (its successor).
 */
export class ReleaseCall extends StoreCall<ReleaseReport, ReleaseResult> {
  /** The queue's id, if it still waits: it keeps its place in the store's line. */
  readonly requeue?: string;
  /** The waiter the release may hand the key to, with the lease set for it. */
  readonly successorWaiter?: Waiter;
  /** The successor lease the release sets for it. */
  readonly successor?: Successor;
  /** When the release was sent, if it sets a successor lease (which counts from then). */
  readonly sentAt?: number;
  /**
   * Whether this release ends the lock. A lock already lost (or run out) ended with that event:
   * its release still clears the key, but a second end in `events$` would count it twice.
   */
  private readonly ends: boolean;

  constructor(
    private readonly context: EngineContext,
    readonly lock: HeldLock,
    /** The lock's queue, unless the lock had already ended. */
    readonly queue: WaitQueue | undefined,
  ) {
    super(context.deadlines, lock.key, 'release', context.health);
    this.ends = !lock.ended;
    if (queue?.waiting) this.requeue = queue.id;
    this.successorWaiter =
      lock.fullKeys.length === 1 && context.localGrants ? queue?.successorWaiter() : undefined;
    if (this.successorWaiter) {
      this.successor = { token: newLockToken(), ttl: this.successorWaiter.successorTtl! };
      // A successor lease counts from before the send; a deadline may count from just after.
      this.sentAt = performance.now();
    }
  }

  /** What the store is asked beyond the release itself; nothing in the common case. */
  get options(): ReleaseOptions | undefined {
    const { requeue, successor } = this;
    const { kind } = this.lock;
    if (kind.type !== 'mutex') return { kind, requeue };
    return requeue === undefined && !successor ? undefined : { requeue, successor };
  }

  /**
   * The answer, in the step it arrives: the queue hears what the store said, and the successor
   * gets its lease.
   */
  protected override map(report: ReleaseReport): ReleaseResult {
    const { context, lock, queue, successorWaiter, successor, sentAt } = this;
    queue?.noteRelease(report.waitersElsewhere, this.requeue !== undefined);
    if (this.ends) emitReleased(context, lock, report.result);
    if (successorWaiter) {
      // The lease set for the successor counts from when the release was sent.
      const expiresAt = context.leaseEnd(sentAt!, successor!.ttl);
      let grant: Grant | undefined = report.succeeded
        ? { token: successor!.token, startedAt: sentAt!, expiresAt }
        : undefined;
      if (grant && isLate(grant)) {
        // Set too long ago to hold: the successor tries for a lease of its own instead.
        context.giveBack(lock.fullKeys, grant.token);
        grant = undefined;
      }
      queue!.successorAnswered(successorWaiter, grant);
    }
    return report.result;
  }

  protected override onFailure(): void {
    if (this.successorWaiter) this.queue!.successorAnswered(this.successorWaiter, undefined);
  }

  protected override lateAnswer(late: ReleaseReport): void {
    if (late.succeeded) this.context.giveBack(this.lock.fullKeys, this.successor!.token);
  }
}

export function emitReleased(context: EngineContext, lock: HeldLock, result: ReleaseResult): void {
  if (!context.bus.listening) return;
  const held = performance.now() - lock.acquiredAt;
  context.emit({ type: 'released', key: lock.key, held, result });
}
