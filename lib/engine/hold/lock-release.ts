import { LockLostError, type LockLossReason } from '../../errors/lock.errors.js';
import type {
  ExtendResult,
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
import { goneReason, renewalTtl } from './watched-lease.js';

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
  // A lease past its deadline is lost before anything else is done with it, even when the
  // watchdog has not run since (an event loop too busy to renew it).
  lock.parts.watchdog.loseIfOverdue(lock);
  if (lock.keepUntil > 0 && !lock.ended) {
    const keep = lock.keepUntil - performance.now();
    if (keep >= 1) return keepForMinHold(lock, keep);
  }
  const queue = lock.ended ? undefined : lock.queue;
  const handOff = handOffLocally(lock, queue);
  if (handOff) return handOff;
  if (queue?.handedOff && !queue.waiting) return releaseAfterATick(lock, queue);
  return releaseInStore(lock, queue);
}

/**
 * A key hot in this process: the next request for it is often a tick away (the caller that
 * just handed it off, looping). Give it that tick before giving the key up.
 */
async function releaseAfterATick(lock: HeldLock, queue: WaitQueue): Promise<ReleaseResult> {
  await new Promise((resolve) => setImmediate(resolve));
  return handOffLocally(lock, queue) ?? releaseInStore(lock, queue);
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
 * Hands the lease to the next waiter in this process when it can take it over: the key stays
 * set in the store under the same token, renewed for the waiter's own lease by one
 * compare-and-PEXPIRE, which also confirms that the store still holds it. A lease the store lost
 * (a forced release, a DEL, a restart) is thus never passed on: the releasing holder learns of
 * the loss instead, and the waiter tries in the store.
 */
function handOffLocally(
  lock: HeldLock,
  queue: WaitQueue | undefined,
): Promise<ReleaseResult> | undefined {
  const { context } = lock.parts;
  if (!queue?.waiting || context.closed || !lock.isHeld) return undefined;
  const next = queue.nextLocalHolder();
  if (!next || !lock.markReleased()) return undefined;
  const call = new HandOffCall(context, lock, queue, next);
  forget(lock, 'released');
  return call.promise;
}

/** The compare-and-PEXPIRE that confirms a local hand-off (see `handOffLocally`). */
class HandOffCall extends StoreCall<ExtendResult[], ReleaseResult> {
  private readonly ttl: number;
  private readonly sentAt: number;

  constructor(
    private readonly context: EngineContext,
    private readonly lock: HeldLock,
    private readonly queue: WaitQueue,
    private readonly waiter: Waiter,
  ) {
    super(context.deadlines, lock.key, 'release', context.health);
    queue.beginHandOff();
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

/** A manual `extend`, traced on `nestjs-distributed-lock:extend`. */
export function extendLock(lock: HeldLock, ttl: number): Promise<void> {
  if (!tracing.extends.hasSubscribers) return extend(lock, ttl);
  return traceExtend({ keys: lock.fullKeys, ttl }, () => extend(lock, ttl));
}

async function extend(lock: HeldLock, ttl: number): Promise<void> {
  const { context, watchdog } = lock.parts;
  if (ttl !== lock.ttl) validateLockOptions({ ttl }, `Extending lock "${lock.key}"`);
  if (watchdog.loseIfOverdue(lock))
    throw lock.lossError() ?? new LockLostError(lock.key, 'expired');
  const sentAt = performance.now();
  if (sentAt >= lock.holdUntil) throw new LockLostError(lock.key, 'max-hold');
  const leaseTtl = renewalTtl(lock, sentAt, ttl);
  const sent = watchdog.extending(lock, sentAt, leaseTtl);
  const lease = { keys: lock.fullKeys, token: lock.token, kind: lock.kind, ttl: leaseTtl };
  const [result] = await context.storeCall(context.store.extend([lease]), lock.key, 'extend');
  if (result !== 'extended') {
    const reason = goneReason(result!);
    loseLock(lock, reason);
    throw lock.lossError() ?? new LockLostError(lock.key, reason);
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

/**
 * A release found the key gone, or another owner's. Answered before the lock's deadline, before
 * which the lease it last sent cannot end in the store, the key was removed while held (a forced
 * release, a DEL, a restart): the lock was lost under its holder's code, and is told as every
 * loss is. Answered after it, the lease ran out while the release was on its way, after the code
 * had ended: nothing was lost while it ran.
 */
function tellLoss(context: EngineContext, lock: HeldLock, result: 'expired' | 'stolen'): void {
  if (performance.now() >= lock.expiresAt) return;
  const { reason } = lock.foundLost(result);
  const held = performance.now() - lock.acquiredAt;
  const lost = { type: 'lost', key: lock.key, held, reason } as const;
  context.emit(lost);
  context.config.log?.(lost);
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
  /** When the release was sent: a successor lease counts from then. */
  readonly sentAt: number;
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

export function emitReleased(context: EngineContext, lock: HeldLock, result: ReleaseResult): void {
  if (!context.bus.observed) return;
  const held = performance.now() - lock.acquiredAt;
  context.emit({ type: 'released', key: lock.key, held, result });
}
