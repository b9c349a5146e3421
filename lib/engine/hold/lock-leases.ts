import { LockLostError, type LockLossReason } from '../../errors/lock.errors.js';
import type { ReleaseResult } from '../../stores/lock-store.interface.js';
import { shutDown, stopWork, type EngineContext } from '../engine-context.js';
import { HeldLock, type LeaseKeeper } from './held-lock.js';
import { LeaseWatchdog } from './lease-watchdog.js';
import { renewalTtl } from './watched-lease.js';
import { emitReleased, ReleaseCall } from './held-lock.js';
import type { LockRequest } from '../request/lock-request.js';
import { validateLockOptions } from '../request/lock-options.validation.js';
import type { WaitQueue } from '../wait/wait-queue.js';
import type { Grant } from '../wait/wait.types.js';
import { isLate } from '../acquire/attempt-call.js';
import { lateGrantError } from '../acquire/refusals.js';
import { traceExtend, traceRelease, tracing } from '../lock.events.js';
import { queueKey, type BusyKeys } from '../acquire/busy-keys.js';

const RELEASED = Promise.resolve<ReleaseResult>('released');

/**
 * The locks this engine holds: granting, renewing, releasing and losing them. The watchdog
 * watches every held lock, so its list is the list of held locks.
 */
export class LockLeases implements LeaseKeeper {
  private readonly watchdog: LeaseWatchdog<HeldLock>;
  /** Set while shutdown waits for the last held lock to end. */
  private emptied?: () => void;

  constructor(
    private readonly context: EngineContext,
    /** The acquirer's table, which holds a lock without a queue (see `HeldLock.queue`). */
    private readonly busyKeys: BusyKeys<object>,
  ) {
    this.watchdog = new LeaseWatchdog<HeldLock>({
      extend: (leases) => {
        const renew = () => context.storeCall(context.store.extend(leases), undefined, 'extend');
        if (!tracing.extends) return renew();
        const keys = leases.flatMap((lease) => lease.keys);
        return traceExtend({ keys, ttl: maxTtl(leases) }, renew);
      },
      renewed: (lease, ttl) => {
        // Checked first: 100,000 leases renew 100,000 times a second, mostly unheard.
        if (context.bus.listening)
          context.emit({ type: 'renewed', key: (lease as HeldLock).key, ttl });
      },
      lost: (lease, reason) => this.lose(lease as HeldLock, reason),
      failed: () => undefined,
      leaseEnd: (sentAt, ttl) => context.leaseEnd(sentAt, ttl),
    });
  }

  get size(): number {
    return this.watchdog.size;
  }

  /** Turns a won attempt into a held lock of `queue` (which already counts it as a holder), if any. */
  hold(request: LockRequest, queue: WaitQueue | undefined, grant: Grant): HeldLock {
    const { options } = request;
    // A grant checked when its answer came may still have aged in the ticks since.
    if (this.context.closed || isLate(grant)) {
      if (grant.from) this.watchdog.delete(grant.from);
      queue?.holderLeft(false);
      this.context.giveBack(request.fullKeys, grant.token, request.kind);
      if (this.context.closed) throw shutDown(request.label);
      throw lateGrantError(request, performance.now() - grant.startedAt);
    }
    const lock = new HeldLock(this, queue, request, grant);
    if (grant.from) this.watchdog.transfer(grant.from, lock);
    else this.watchdog.add(lock, grant.startedAt);
    if (this.context.bus.listening) {
      const waited = performance.now() - request.startedAt;
      this.context.emit({ type: 'acquired', key: lock.key, waited, fence: lock.fence });
    }
    if (options.signal?.aborted) {
      void lock.release().catch(() => undefined);
      throw options.signal.reason;
    }
    return lock;
  }

  /** Traced on `nestjs-distributed-lock:release` (see lock.events.ts). */
  releaseLease(lock: HeldLock): Promise<ReleaseResult> {
    if (!tracing.releases) return this.release(lock);
    const held = performance.now() - lock.acquiredAt;
    const { key, kind, fence } = lock;
    return traceRelease({ key, kind, fence, held }, () => this.release(lock));
  }

  /** Not async where it can be: each await between the store's answer and the caller is a tick. */
  private release(lock: HeldLock): Promise<ReleaseResult> {
    if (lock.keepUntil > 0 && !lock.ended) {
      const keep = lock.keepUntil - performance.now();
      if (keep >= 1) return this.keepForMinHold(lock, keep);
    }
    const queue = lock.ended ? undefined : lock.queue;
    if (this.handOffLocally(lock, queue)) return RELEASED;
    if (queue?.handedOff && !queue.waiting) return this.releaseAfterATick(lock, queue);
    return this.releaseInStore(lock, queue);
  }

  /**
   * A key hot in this process: the next request for it is often a tick away (the caller that
   * just handed it off, looping). Give it that tick before giving the key up.
   */
  private async releaseAfterATick(lock: HeldLock, queue: WaitQueue): Promise<ReleaseResult> {
    await new Promise((resolve) => setImmediate(resolve));
    if (this.handOffLocally(lock, queue)) return 'released';
    return this.releaseInStore(lock, queue);
  }

  /**
   * A release before `minHold` is over: the key stays for what is left of it (a shorter lease,
   * by the same compare-and-PEXPIRE as renewal), so the lock stays taken until then.
   */
  private async keepForMinHold(lock: HeldLock, keep: number): Promise<ReleaseResult> {
    const { context } = this;
    if (lock.markReleased()) this.forget(lock, 'released');
    const { fullKeys: keys, token, kind } = lock;
    const lease = { keys, token, kind, ttl: Math.ceil(keep) };
    const [found] = await context.storeCall(context.store.extend([lease]), lock.key, 'release');
    const result = found === 'extended' ? 'released' : found;
    emitReleased(this.context, lock, result);
    return result;
  }

  private releaseInStore(lock: HeldLock, queue: WaitQueue | undefined): Promise<ReleaseResult> {
    const { context } = this;
    const call = new ReleaseCall(context, lock, queue);
    call.start(context.store.release(lock.fullKeys, lock.token, call.options), call.sentAt);
    if (lock.markReleased()) this.forget(lock, 'released');
    return call.promise;
  }

  /**
   * Hands the lease straight to the next waiter in this process when it can take it: the key
   * stays set in the store under the same token, so the hand-off costs no round trip.
   */
  private handOffLocally(lock: HeldLock, queue: WaitQueue | undefined): boolean {
    if (!queue?.waiting || this.context.closed || !lock.isHeld) return false;
    const now = performance.now();
    const grant = { token: lock.token, startedAt: now, expiresAt: lock.expiresAt, from: lock };
    const next = queue.nextLocalHolder(grant);
    if (!next || !lock.markReleased()) return false;
    // The watchdog entry moves to the new holder in `hold`.
    emitReleased(this.context, lock, 'released');
    queue.handOffTo(next, grant);
    return true;
  }

  /** A manual `extend`, traced on `nestjs-distributed-lock:extend`. */
  extendLease(lock: HeldLock, ttl: number): Promise<void> {
    if (!tracing.extends) return this.extend(lock, ttl);
    return traceExtend({ keys: lock.fullKeys, ttl }, () => this.extend(lock, ttl));
  }

  private async extend(lock: HeldLock, ttl: number): Promise<void> {
    const { context } = this;
    if (ttl !== lock.ttl) validateLockOptions({ ttl }, `Extending lock "${lock.key}"`);
    const sentAt = performance.now();
    if (sentAt >= lock.holdUntil) throw new LockLostError(lock.key, 'max-hold');
    const leaseTtl = renewalTtl(lock, sentAt, ttl);
    const sent = this.watchdog.extending(lock, sentAt, leaseTtl);
    const lease = { keys: lock.fullKeys, token: lock.token, kind: lock.kind, ttl: leaseTtl };
    const [result] = await context.storeCall(context.store.extend([lease]), lock.key, 'extend');
    if (result !== 'extended') {
      this.lose(lock, result);
      throw new LockLostError(lock.key, result);
    }
    this.watchdog.extended(lock, sent, sentAt, leaseTtl);
    context.emit({ type: 'renewed', key: lock.key, ttl: leaseTtl });
  }

  /** Shutdown begins: every holder is asked to stop, through its lock's `signal`. */
  abortAll(): void {
    for (const lock of this.watchdog.leases()) lock.abort(stopWork(lock.key));
  }

  /**
   * Shutdown: waits up to `timeout` ms for the holders to release their locks (each release goes
   * to the store as usual). Renewal then stops: a lock still held keeps its key until the lease
   * runs out, since deleting it would free the lock under code that still runs.
   */
  async drain(timeout: number): Promise<void> {
    if (this.watchdog.size > 0) {
      const waiting = { type: 'shutdown-waiting', keys: this.heldKeys(), timeout } as const;
      this.context.emit(waiting);
      this.context.config.log?.(waiting);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => (this.emptied = resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, timeout))),
      ]);
      clearTimeout(timer);
      this.emptied = undefined;
    }
    this.watchdog.stop();
  }

  /** The keys held now, each once (a semaphore may hold several permits of one key). */
  private heldKeys(): string[] {
    return [...new Set(this.watchdog.leases().map((lock) => lock.key))];
  }

  private lose(lock: HeldLock, reason: LockLossReason): void {
    if (!lock.markLost(reason)) return;
    this.forget(lock, 'lost');
    // Keys of a multi-key lock that are still ours would otherwise live on for a whole lease.
    if (lock.fullKeys.length > 1) this.context.giveBack(lock.fullKeys, lock.token);
    const held = performance.now() - lock.acquiredAt;
    if (!lock.autoRenew && reason === 'expired') {
      this.context.emit({ type: 'expired', key: lock.key, held });
    } else {
      const lost = { type: 'lost', key: lock.key, held, reason } as const;
      this.context.emit(lost);
      this.context.config.log?.(lost);
    }
  }

  private forget(lock: HeldLock, how: 'released' | 'lost'): void {
    this.watchdog.delete(lock);
    if (this.watchdog.size === 0) this.emptied?.();
    if (lock.queue) lock.queue.holderLeft(how === 'released');
    else this.busyKeys.deleteIf(queueKey(lock), lock);
  }
}

function maxTtl(leases: readonly { readonly ttl: number }[]): number {
  return Math.max(...leases.map((lease) => lease.ttl));
}
