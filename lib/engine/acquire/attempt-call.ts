import type { LockError } from '../../errors/lock.errors.js';
import { writerPatience } from '../../policy/wait-policy.js';
import type {
  AcquireAttempt,
  AcquireRequest,
  LockStore,
} from '../../stores/lock-store.interface.js';
import type { EngineContext } from '../engine-context.js';
import {
  kindConflict,
  leaseTtlOf,
  newLockToken,
  type LockRequest,
} from '../request/lock-request.js';
import { StoreCall } from '../store-calls/store-call.js';
import type { WaitQueue } from '../wait/wait-queue.js';
import type { AttemptOutcome, Grant } from '../wait/wait.types.js';
import type { Refusals } from './refusals.js';

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
    context.attemptSettled();
    if (attempt.acquired) {
      const expiresAt = context.leaseEnd(startedAt, leaseTtlOf(request));
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
    this.context.attemptSettled();
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
  context.attemptSent();
  const call = new AttemptCall(context, refusals, request, token, startedAt);
  call.start(tryAcquire(context.store, lease), startedAt);
  return call;
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

/** True once a grant's lease may be over in the store: it must not be handed to a holder. */
export function isLate(grant: Grant): boolean {
  return performance.now() >= grant.expiresAt;
}
