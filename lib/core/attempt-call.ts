import type { AcquireAttempt } from '../stores/lock-store.interface.js';
import type { CallDeadlines } from './call-deadlines.js';
import type { LockRequest } from './lock-request.js';
import { StoreCall, type StoreCallFailure } from './store-call.js';
import type { WaitQueue } from './wait-queue.js';

/** What an acquire attempt reports to the acquirer that sent it. */
export interface AttemptOwner {
  /** The answer, in time: returns the call's value. */
  attemptAnswered(call: AttemptCall, attempt: AcquireAttempt): unknown;
  attemptFailed(call: AttemptCall): void;
  /** Gives back a lease won after its call timed out. */
  giveBack(keys: readonly string[], token: string): void;
}

/** One acquire attempt in flight, with what its answer needs to become a lock. */
export class AttemptCall extends StoreCall<AcquireAttempt, unknown> {
  /** The queue of a first attempt, made outside it (nobody here held, waited or tried). */
  firstIn?: WaitQueue;

  constructor(
    private readonly owner: AttemptOwner,
    readonly request: LockRequest,
    readonly token: string,
    /** When the attempt was sent (`performance.now()`), or a little before. */
    readonly startedAt: number,
    deadlines: CallDeadlines,
    report: StoreCallFailure,
  ) {
    super(deadlines, request.label, 'acquire', report);
  }

  protected override map(attempt: AcquireAttempt): unknown {
    return this.owner.attemptAnswered(this, attempt);
  }

  protected override onFailure(): void {
    this.owner.attemptFailed(this);
  }

  protected override lateAnswer(late: AcquireAttempt): void {
    if (late.acquired) this.owner.giveBack(this.request.fullKeys, this.token);
  }
}
