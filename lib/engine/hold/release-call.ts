import type {
  ReleaseOptions,
  ReleaseReport,
  ReleaseResult,
} from '../../stores/lock-store.interface.js';
import type { EngineContext } from '../engine-context.js';
import type { HeldLock } from './held-lock.js';
import { newLockToken } from '../request/lock-request.js';
import { StoreCall } from '../store-calls/store-call.js';
import type { WaitQueue } from '../wait/wait-queue.js';
import type { Grant, Waiter } from '../wait/wait.types.js';
import { isLate } from '../acquire/attempt-call.js';

/** A lease a release sets for the next waiter here, in the same call. */
export type Successor = NonNullable<ReleaseOptions['successor']>;

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

  /** The answer, in the step it arrives: the queue hears what the store said, and the heir gets its lease. */
  protected override map(report: ReleaseReport): ReleaseResult {
    const { context, lock, queue, heir, successor, sentAt } = this;
    queue?.noteRelease(report.waitersElsewhere, this.requeue !== undefined);
    emitReleased(context, lock, report.result);
    if (heir) {
      // The lease set for the heir counts from when the release was sent.
      const expiresAt = context.leaseEnd(sentAt!, successor!.ttl);
      let grant: Grant | undefined = report.succeeded
        ? { token: successor!.token, startedAt: sentAt!, expiresAt }
        : undefined;
      if (grant && isLate(grant)) {
        // Set too long ago to hold: the heir tries for a lease of its own instead.
        context.giveBack(lock.fullKeys, grant.token);
        grant = undefined;
      }
      queue!.heirAnswered(heir, grant);
    }
    return report.result;
  }

  protected override onFailure(): void {
    if (this.heir) this.queue!.heirAnswered(this.heir, undefined);
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
