import { LockStoreError, type LockError } from '../../errors/lock.errors.js';
import type {
  AcquireAttempt,
  AcquireRequest,
  LockStore,
} from '../../stores/lock-store.interface.js';
import type { EngineContext } from '../engine-context.js';
import { leaseTtlOf, type LockRequest } from '../request/lock-request.js';
import { StoreCall } from '../store-calls/store-call.js';
import type { WaitQueue } from '../wait/wait-queue.js';
import type { AttemptOutcome, Grant } from '../wait/wait.types.js';

/** What an acquire attempt reports to the acquirer that sent it. */
export interface AttemptOwner {
  /** The answer, in time: returns the call's value. */
  attemptAnswered(call: AttemptCall, attempt: AcquireAttempt): unknown;
  attemptFailed(call: AttemptCall): void;
}

/** One acquire attempt in flight, with what its answer needs to become a lock. */
export class AttemptCall extends StoreCall<AcquireAttempt, unknown> {
  /** The queue of a first attempt, made outside it (nobody here held, waited or tried). */
  firstIn?: WaitQueue;
  /** The id of the keys of a first attempt made without a queue, while it has none. */
  lone?: string;

  constructor(
    private readonly owner: AttemptOwner,
    private readonly context: EngineContext,
    readonly request: LockRequest,
    readonly token: string,
    /** When the attempt was sent (`performance.now()`), or a little before. */
    readonly startedAt: number,
  ) {
    super(context.deadlines, request.label, 'acquire', context.health);
  }

  protected override map(attempt: AcquireAttempt): unknown {
    return this.owner.attemptAnswered(this, attempt);
  }

  /**
   * A failed or unanswered attempt may still have taken the keys (the reply, not the command,
   * was lost), so they are given back once the store is done with it: a script's NOSCRIPT
   * fallback can run it again after a timeout, and the give-back must land after that.
   */
  protected override onFailure(error: LockError): void {
    this.owner.attemptFailed(this);
    // A store that refused the call before sending it says so (`unsent`).
    if ((error.cause as { unsent?: boolean } | undefined)?.unsent) return;
    const { fullKeys, kind } = this.request;
    const giveBack = (): void => this.context.giveBack(fullKeys, this.token, kind);
    this.operation!.then(giveBack, giveBack);
  }
}

/** The store's attempt; a store that throws rather than rejects fails the attempt all the same. */
export function tryAcquire(store: LockStore, lease: AcquireRequest): Promise<AcquireAttempt> {
  try {
    return store.tryAcquire(lease);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A late win as an attempt's outcome: try again at once. */
const LATE: AttemptOutcome = Object.freeze({ pttl: 0, late: true });

/** True once a grant's lease may be over in the store: it must not be handed to a holder. */
export function isLate(grant: Grant): boolean {
  return performance.now() >= grant.expiresAt;
}

/** A request got no lock because every win it had came back after its lease had ended. */
export function lateGrantError(request: LockRequest, took: number): LockStoreError {
  return new LockStoreError(
    request.label,
    `the store's answer came ${Math.round(took)} ms after the request, later than the lease of ` +
      `${leaseTtlOf(request)} ms, so the lock was given back rather than held without a valid lease. ` +
      'Check the Redis latency, or use a longer `ttl`.',
  );
}

/**
 * Wins whose answer came after their lease had ended: nobody may act on them, since another
 * holder may have the keys already. They are given back, and the request tries again; if it
 * gets no lock, its error says why.
 */
export class LateWins {
  /** How long the answer to a request's last late win took. */
  private readonly took = new WeakMap<LockRequest, number>();

  giveBack(context: EngineContext, request: LockRequest, grant: Grant): AttemptOutcome {
    context.giveBack(request.fullKeys, grant.token, request.kind);
    this.took.set(request, performance.now() - grant.startedAt);
    return LATE;
  }

  /** The error of a request that had a late win and got no lock, if it had one. */
  errorFor(request: LockRequest): LockStoreError | undefined {
    const took = this.took.get(request);
    return took === undefined ? undefined : lateGrantError(request, took);
  }
}
