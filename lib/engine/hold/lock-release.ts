import { LockLostError, type LockLossReason } from '../../errors/lock.errors.js';
import type {
  ReleaseOptions,
  ReleaseReport,
  ReleaseResult,
} from '../../stores/lock-store.interface.js';
import type { EngineContext } from '../engine-context.js';
import { leaseEnd, newLockToken, queueKey } from '../request/lock-request.js';
import { validateLockOptions } from '../request/lock-options.validation.js';
import { StoreCall } from '../store-calls/store-call.js';
import type { WaitQueue } from '../wait/wait-queue.js';
import type { Grant, Waiter } from '../wait/wait.types.js';
import { isLate } from '../acquire/lock-acquirer.js';
import { traceExtend, traceRelease, tracing } from '../lock.events.js';
import type { HeldLock } from './held-lock.js';
import { renewalTtl } from './watched-lease.js';

const RELEASED = Promise.resolve<ReleaseResult>('released');

/**
 * Releases a held lock: to the next waiter here when one can take it, else in the store.
 * Traced on `nestjs-distributed-lock:release` (see lock.events.ts).
 */
export function releaseLock(lock: HeldLock): Promise<ReleaseResult> {
  if (!tracing.releases.hasSubscribers) return release(lock);
  const held = performance.now() - lock.acquiredAt;
  const { key, kind, fence } = lock;
  return traceRelease({ key, kind, fence, held }, () => release(lock));
}

/** Not async where it can be: each await between the store's answer and the caller is a tick. */
function release(lock: HeldLock): Promise<ReleaseResult> {
  if (lock.keepUntil > 0 && !lock.ended) {
    const keep = lock.keepUntil - performance.now();
    if (keep >= 1) return keepForMinHold(lock, keep);
  }
  const queue = lock.ended ? undefined : lock.queue;
  if (handOffLocally(lock, queue)) return RELEASED;
  if (queue?.handedOff && !queue.waiting) return releaseAfterATick(lock, queue);
  return releaseInStore(lock, queue);
}

/**
 * A key hot in this process: the next request for it is often a tick away (the caller that
 * just handed it off, looping). Give it that tick before giving the key up.
 */
async function releaseAfterATick(lock: HeldLock, queue: WaitQueue): Promise<ReleaseResult> {
  await new Promise((resolve) => setImmediate(resolve));
  if (handOffLocally(lock, queue)) return 'released';
  return releaseInStore(lock, queue);
}

/**
 * A release before `minHold` is over: the key stays for what is left of it (a shorter lease,
 * by the same compare-and-PEXPIRE as renewal), so the lock stays taken until then.
 */
async function keepForMinHold(lock: HeldLock, keep: number): Promise<ReleaseResult> {
  const { context } = lock.parts;
  if (lock.markReleased()) forget(lock, 'released');
  const { fullKeys: keys, token, kind } = lock;
  const lease = { keys, token, kind, ttl: Math.ceil(keep) };
  const [found] = await context.storeCall(context.store.extend([lease]), lock.key, 'release');
  const result = found === 'extended' ? 'released' : found;
  emitReleased(context, lock, result);
  return result;
}

function releaseInStore(lock: HeldLock, queue: WaitQueue | undefined): Promise<ReleaseResult> {
  const { context } = lock.parts;
  const call = new ReleaseCall(context, lock, queue);
  call.start(context.store.release(lock.fullKeys, lock.token, call.options), call.sentAt);
  if (lock.markReleased()) forget(lock, 'released');
  return call.promise;
}

/**
 * Hands the lease straight to the next waiter in this process when it can take it: the key
 * stays set in the store under the same token, so the hand-off costs no round trip.
 */
function handOffLocally(lock: HeldLock, queue: WaitQueue | undefined): boolean {
  const { context } = lock.parts;
  if (!queue?.waiting || context.closed || !lock.isHeld) return false;
  const now = performance.now();
  const grant = { token: lock.token, startedAt: now, expiresAt: lock.expiresAt, from: lock };
  const next = queue.nextLocalHolder(grant);
  if (!next || !lock.markReleased()) return false;
  // The watchdog entry moves to the new holder in `holdLock`.
  emitReleased(context, lock, 'released');
  queue.handOffTo(next, grant);
  return true;
}

/** A manual `extend`, traced on `nestjs-distributed-lock:extend`. */
export function extendLock(lock: HeldLock, ttl: number): Promise<void> {
  if (!tracing.extends.hasSubscribers) return extend(lock, ttl);
  return traceExtend({ keys: lock.fullKeys, ttl }, () => extend(lock, ttl));
}

async function extend(lock: HeldLock, ttl: number): Promise<void> {
  const { context, watchdog } = lock.parts;
  if (ttl !== lock.ttl) validateLockOptions({ ttl }, `Extending lock "${lock.key}"`);
  const sentAt = performance.now();
  if (sentAt >= lock.holdUntil) throw new LockLostError(lock.key, 'max-hold');
  const leaseTtl = renewalTtl(lock, sentAt, ttl);
  const sent = watchdog.extending(lock, sentAt, leaseTtl);
  const lease = { keys: lock.fullKeys, token: lock.token, kind: lock.kind, ttl: leaseTtl };
  const [result] = await context.storeCall(context.store.extend([lease]), lock.key, 'extend');
  if (result !== 'extended') {
    loseLock(lock, result);
    throw new LockLostError(lock.key, result);
  }
  watchdog.extended(lock, sent, sentAt, leaseTtl);
  context.emit({ type: 'renewed', key: lock.key, ttl: leaseTtl });
}

/** The lock is gone from the store, or its local deadline passed: it ends, loudly. */
export function loseLock(lock: HeldLock, reason: LockLossReason): void {
  if (!lock.markLost(reason)) return;
  forget(lock, 'lost');
  const { context } = lock.parts;
  // Keys of a multi-key lock that are still ours would otherwise live on for a whole lease.
  if (lock.fullKeys.length > 1) context.giveBack(lock.fullKeys, lock.token);
  const held = performance.now() - lock.acquiredAt;
  if (!lock.autoRenew && reason === 'expired') {
    context.emit({ type: 'expired', key: lock.key, held });
  } else {
    const lost = { type: 'lost', key: lock.key, held, reason } as const;
    context.emit(lost);
    context.config.log?.(lost);
  }
}

function forget(lock: HeldLock, how: 'released' | 'lost'): void {
  const { watchdog, busyKeys } = lock.parts;
  watchdog.delete(lock);
  if (lock.queue) lock.queue.holderLeft(how === 'released');
  else busyKeys.deleteIf(queueKey(lock), lock);
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
      const expiresAt = leaseEnd(context.store, sentAt!, successor!.ttl);
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
  if (!context.bus.observed) return;
  const held = performance.now() - lock.acquiredAt;
  context.emit({ type: 'released', key: lock.key, held, result });
}
