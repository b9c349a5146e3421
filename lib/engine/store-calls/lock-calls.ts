import type { LockError } from '../../errors/lock.errors.js';
import type { LockLostError } from '../../errors/lock.errors.js';
import { writerPatience } from '../../policy/wait-policy.js';
import type {
  AcquireAttempt,
  AcquireRequest,
  ExtendResult,
  LockKind,
  LockStore,
  ReleaseOptions,
  ReleaseReport,
  ReleaseResult,
} from '../../stores/lock-store.interface.js';
import {
  isLate,
  leaseEnd,
  leaseTtlOf,
  newLockToken,
  type LockRequest,
} from '../request/lock-request.js';
import type { WaitQueue } from '../wait/wait-queue.js';
import type { AttemptOutcome, Grant, Waiter } from '../wait/wait.types.js';
import type { EngineContext } from './engine-context.js';
import { kindConflict, type Refusals } from './refusals.js';
import { StoreCall } from './store-call.js';

/*
 * The calls a lock makes to the store, and what their answers mean: an acquire attempt (a grant,
 * the holder's lease left, a late grant given back), a release (the queue here hears whether
 * others wait elsewhere, and a successor gets its lease), and the compare-and-PEXPIRE that
 * confirms a local hand-off. Each reads its answer in the step it arrives, and tells the key's
 * queue and the lock what it found: the layers above only start them.
 */

/**
 * What a release's call reads of the lock it ends, and tells it: a held lock (`HeldLock`), seen
 * from below.
 */
export interface EndingLock {
  readonly key: string;
  readonly fullKeys: readonly string[];
  readonly token: string;
  readonly kind: LockKind;
  /** When the lease was won (`performance.now()`), and its local deadline. */
  readonly acquiredAt: number;
  readonly expiresAt: number;
  /** Lost or released before this call: its end was told already. */
  readonly ended: boolean;
  /** The call found the key gone or someone else's before the deadline: the lock was lost. */
  foundLost(result: 'expired' | 'stolen'): LockLostError;
}

/**
 * One acquire attempt in flight. Its promise settles with the attempt's outcome, read in the
 * step the answer arrives: a grant (still within its lease), the holder's remaining lease, or
 * at once again after a late grant (given back); a kind conflict rejects.
 */
export class AttemptCall extends StoreCall<AcquireAttempt, AttemptOutcome> {
  /** The queue of a first attempt, made outside it (nobody here held, waited or tried). */
  outsideQueue?: WaitQueue;
  /** The busy keys entry of an unqueued first attempt, while it has no queue. */
  busyKey?: string;

  constructor(
    private readonly context: EngineContext,
    private readonly refusals: Refusals,
    readonly request: LockRequest,
    readonly token: string,
    /** When the attempt was sent (`performance.now()`), or a little before. */
    readonly startedAt: number,
  ) {
    super(context.deadlines, request.label, 'acquire', context.health);
  }

  protected override map(attempt: AcquireAttempt): AttemptOutcome {
    const { context, refusals, request, token, startedAt } = this;
    attemptSettled(context);
    if (attempt.acquired) {
      const expiresAt = leaseEnd(context.store, startedAt, leaseTtlOf(request));
      const grant = { token, fences: attempt.fences, startedAt, expiresAt };
      return isLate(grant) ? refusals.lateGrant(request, grant) : { grant };
    }
    if (attempt.conflict !== undefined) {
      throw kindConflict(request.label, request.kind, attempt.conflict);
    }
    refusals.noteNodes(request, attempt.nodes);
    return { pttl: attempt.pttl };
  }

  /**
   * A failed or unanswered attempt may still have taken the keys (the reply, not the command,
   * was lost), so they are given back once the store is done with it: a script's NOSCRIPT
   * fallback can run it again after a timeout, and the give-back must land after that.
   */
  protected override onFailure(error: LockError): void {
    attemptSettled(this.context);
    // A store that refused the call before sending it says so (`unsent`).
    if ((error.cause as { unsent?: boolean } | undefined)?.unsent) return;
    const { fullKeys, kind } = this.request;
    const giveBack = (): void => this.context.giveBack(fullKeys, this.token, kind);
    this.operation!.then(giveBack, giveBack);
  }
}

/**
 * Sends one attempt with the request's own options. `startedAt` may be a little early (the
 * request's start, for the first attempt), which only shortens the lease counted. `queue`: the
 * id of the queue it tries for, which the store keeps in the key's line when it is busy.
 */
export function sendAttempt(
  context: EngineContext,
  refusals: Refusals,
  request: LockRequest,
  queue: string | undefined,
  startedAt: number,
): AttemptCall {
  const token = newLockToken();
  const { fencing } = request.options;
  const { fullKeys: keys, kind } = request;
  const lease: AcquireRequest = { keys, token, ttl: leaseTtlOf(request), fencing, queue, kind };
  // Only a writer that will wait holds readers back (see `marksWriter`).
  if (marksWriter(request)) {
    (lease as { patience?: number }).patience = writerPatience(context.config.pollCap);
  }
  context.attemptsOut++;
  const call = new AttemptCall(context, refusals, request, token, startedAt);
  call.start(tryAcquire(context.store, lease), startedAt);
  return call;
}

/** An attempt sent by `sendAttempt` has its answer, or failed. */
function attemptSettled(context: EngineContext): void {
  if (--context.attemptsOut === 0) context.attemptsDone?.();
}

/**
 * A writer that will wait marks the key, holding new readers back, from its first attempt on.
 * The mark carries its queue's id, so that the queue takes it out of the store when it stops
 * waiting; a writer that gave up would otherwise hold readers back for its whole patience. Such
 * a writer therefore always has a queue, and sends its id with every attempt.
 */
export function marksWriter({ kind, options }: LockRequest): boolean {
  return kind.type === 'write' && options.wait > 0;
}

/** The store's attempt; a store that throws rather than rejects fails the attempt all the same. */
export function tryAcquire(store: LockStore, lease: AcquireRequest): Promise<AcquireAttempt> {
  try {
    return store.tryAcquire(lease);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The compare-and-PEXPIRE that confirms a local hand-off (see `handOffLocally` in held-lock.ts). */
export class HandOffCall extends StoreCall<ExtendResult[], ReleaseResult> {
  private readonly ttl: number;
  private readonly sentAt: number;

  constructor(
    private readonly context: EngineContext,
    private readonly lock: EndingLock,
    private readonly queue: WaitQueue,
    private readonly waiter: Waiter,
  ) {
    super(context.deadlines, lock.key, 'release', context.health);
    queue.beginOutsideAttempt();
    this.ttl = waiter.takeOverTtl!;
    this.sentAt = performance.now();
    const { fullKeys: keys, token, kind } = lock;
    this.start(context.store.extend([{ keys, token, kind, ttl: this.ttl }]), this.sentAt);
  }

  protected override map([found]: ExtendResult[]): ReleaseResult {
    const { context, lock, queue, waiter, sentAt, ttl } = this;
    const result = found === 'extended' ? 'released' : found!;
    let grant: Grant | undefined;
    if (result === 'released') {
      grant = {
        token: lock.token,
        startedAt: sentAt,
        expiresAt: leaseEnd(context.store, sentAt, ttl),
      };
      // Confirmed too late to hold: nobody has the lease, so it goes back.
      if (isLate(grant)) this.giveBack();
    } else {
      tellLoss(context, lock, result);
    }
    emitReleased(context, lock, result);
    queue.handOffAnswered(waiter, grant && !isLate(grant) ? grant : undefined);
    return result;
  }

  protected override onFailure(): void {
    this.queue.handOffAnswered(this.waiter, undefined);
    this.giveBack();
  }

  protected override lateAnswer([found]: ExtendResult[]): void {
    if (found === 'extended') this.giveBack();
  }

  private giveBack(): void {
    const { fullKeys, token, kind } = this.lock;
    this.context.giveBack(fullKeys, token, kind);
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
  /** When the release was sent: a successor lease counts from then. */
  readonly sentAt: number;
  /**
   * Whether this release ends the lock. A lock already lost (or run out) ended with that event:
   * its release still clears the key, but a second end in `events$` would count it twice.
   */
  private readonly ends: boolean;

  constructor(
    private readonly context: EngineContext,
    readonly lock: EndingLock,
    /** The lock's queue, unless the lock had already ended. */
    readonly queue: WaitQueue | undefined,
  ) {
    super(context.deadlines, lock.key, 'release', context.health);
    this.ends = !lock.ended;
    if (queue?.waiting) this.requeue = queue.id;
    this.successorWaiter =
      lock.fullKeys.length === 1 && context.localGrants ? queue?.successorWaiter() : undefined;
    if (this.successorWaiter) {
      this.successor = { token: newLockToken(), ttl: this.successorWaiter.takeOverTtl! };
    }
    // A successor lease counts from before the send; a deadline may count from just after.
    this.sentAt = performance.now();
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
    if (this.ends) {
      if (report.result !== 'released') tellLoss(context, lock, report.result);
      emitReleased(context, lock, report.result);
    }
    if (successorWaiter) {
      // The lease set for the successor counts from when the release was sent.
      const expiresAt = leaseEnd(context.store, sentAt, successor!.ttl);
      let grant: Grant | undefined = report.succeeded
        ? { token: successor!.token, startedAt: sentAt, expiresAt }
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

export function emitReleased(
  context: EngineContext,
  lock: EndingLock,
  result: ReleaseResult,
): void {
  if (!context.bus.observed) return;
  const held = performance.now() - lock.acquiredAt;
  context.emit({ type: 'released', key: lock.key, held, result });
}

/**
 * A release found the key gone, or another owner's. Answered before the lock's deadline, before
 * which the lease it last sent cannot end in the store, the key was removed while held (a forced
 * release, a DEL, a restart): the lock was lost under its holder's code, and is told as every
 * loss is. Answered after it, the lease ran out while the release was on its way, after the code
 * had ended: nothing was lost while it ran.
 */
function tellLoss(context: EngineContext, lock: EndingLock, result: 'expired' | 'stolen'): void {
  if (performance.now() >= lock.expiresAt) return;
  const { reason } = lock.foundLost(result);
  const held = performance.now() - lock.acquiredAt;
  const lost = { type: 'lost', key: lock.key, held, reason } as const;
  context.emit(lost);
  context.config.log?.(lost);
}
