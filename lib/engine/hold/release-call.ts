import type {
  ReleaseOptions,
  ReleaseReport,
  ReleaseResult,
} from '../../stores/lock-store.interface.js';
import type { EngineContext } from '../engine-context.js';
import type { HeldLock } from './held-lock.js';
import { newLockToken } from '../request/lock-token.js';
import { StoreCall } from '../store-calls/store-call.js';
import type { WaitQueue } from '../wait/wait-queue.js';
import type { Waiter } from '../wait/wait.types.js';

/** A lease a release sets for the next waiter here, in the same call. */
export type Successor = NonNullable<ReleaseOptions['successor']>;

/** What a release reports to the engine that sent it. */
export interface ReleaseOwner {
  /** The answer, in time: returns the release's result. */
  releaseAnswered(call: ReleaseCall, report: ReleaseReport): ReleaseResult;
}

/**
 * One release in flight. When this process still wants the key, it keeps the process's place
 * in the store's line, or hands the key straight to the next waiter here (its heir).
 */
export class ReleaseCall extends StoreCall<ReleaseReport, ReleaseResult> {
  /** The queue's id, if it still waits: it keeps its place in the store's line. */
  readonly requeue?: string;
  /** The waiter the release may hand the key to, with the lease set for it. */
  readonly heir?: Waiter;
  readonly successor?: Successor;
  /** When the release was sent, if it sets a successor's lease (which counts from then). */
  readonly sentAt?: number;

  constructor(
    private readonly owner: ReleaseOwner,
    private readonly context: EngineContext,
    readonly lock: HeldLock,
    /** The lock's queue, unless the lock had already ended. */
    readonly queue: WaitQueue | undefined,
  ) {
    super(context.deadlines, lock.key, 'release', context.health);
    if (queue?.waiting) this.requeue = queue.id;
    this.heir = lock.fullKeys.length === 1 && context.localGrants ? queue?.heir() : undefined;
    if (this.heir) {
      this.successor = { token: newLockToken(), ttl: this.heir.successorTtl! };
      // A successor's lease counts from before the send; a deadline may count from just after.
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

  protected override map(report: ReleaseReport): ReleaseResult {
    return this.owner.releaseAnswered(this, report);
  }

  protected override onFailure(): void {
    if (this.heir) this.queue!.heirAnswered(this.heir, undefined);
  }

  protected override lateAnswer(late: ReleaseReport): void {
    if (late.succeeded) this.context.giveBack(this.lock.fullKeys, this.successor!.token);
  }
}
