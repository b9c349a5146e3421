import type { ReleaseReport, ReleaseResult } from '../stores/lock-store.interface.js';
import type { CallDeadlines } from './call-deadlines.js';
import type { HeldLock } from './held-lock.js';
import { StoreCall, type StoreCallFailure } from './store-call.js';
import type { WaitQueue } from './wait-queue.js';
import type { Waiter } from './wait-queue.interface.js';

/** A lease a release sets for the next waiter here, in the same call. */
export interface Successor {
  readonly token: string;
  readonly ttl: number;
}

/** What a release reports to the engine that sent it. */
export interface ReleaseOwner {
  /** The answer, in time: returns the release's result. */
  releaseAnswered(call: ReleaseCall, report: ReleaseReport): ReleaseResult;
  /** Gives back a lease set for a successor after the call timed out. */
  giveBack(keys: readonly string[], token: string): void;
}

/** One release in flight, with the local queue it may hand the key on to. */
export class ReleaseCall extends StoreCall<ReleaseReport, ReleaseResult> {
  constructor(
    private readonly owner: ReleaseOwner,
    readonly lock: HeldLock,
    /** The lock's queue, unless the lock had already ended. */
    readonly queue: WaitQueue | undefined,
    /** The queue still waits: it keeps its place in the store's line. */
    readonly requeued: boolean,
    /** The waiter the release may hand the key to, with the lease set for it. */
    readonly heir: Waiter | undefined,
    readonly successor: Successor | undefined,
    /** When the release was sent, if it sets a successor's lease (which counts from then). */
    readonly sentAt: number | undefined,
    deadlines: CallDeadlines,
    report: StoreCallFailure,
  ) {
    super(deadlines, lock.key, 'release', report);
  }

  protected override map(report: ReleaseReport): ReleaseResult {
    return this.owner.releaseAnswered(this, report);
  }

  protected override onFailure(): void {
    if (this.heir) this.queue!.heirAnswered(this.heir, undefined);
  }

  protected override lateAnswer(late: ReleaseReport): void {
    if (late.succeeded) this.owner.giveBack(this.lock.fullKeys, this.successor!.token);
  }
}
