import { LockLostError, type LockLossReason } from '../errors/lock.errors.js';
import type { ReleaseResult } from '../stores/lock-store.interface.js';
import { shutDown, type EngineContext } from './engine-context.js';
import { HeldLock, type LeaseKeeper } from './held-lock.js';
import { LeaseWatchdog } from './lease-watchdog.js';
import type { LockRequest } from './lock-request.js';
import { validateLockOptions } from './lock-options.validation.js';
import type { Grant, WaitQueue } from './wait-queue.js';

/** The locks this engine holds: granting, renewing, releasing and losing them. */
export class LockLeases implements LeaseKeeper {
  private readonly held = new Map<HeldLock, WaitQueue>();
  private readonly watchdog: LeaseWatchdog;

  constructor(private readonly context: EngineContext) {
    this.watchdog = new LeaseWatchdog({
      extend: (leases) => context.storeCall(context.store.extend(leases), undefined, 'extend'),
      renewed: (lease, ttl) => context.emit({ type: 'renewed', key: (lease as HeldLock).key, ttl }),
      lost: (lease, reason) => this.lose(lease as HeldLock, reason),
      failed: () => undefined,
      drift: (ttl) => context.drift(ttl),
    });
  }

  get size(): number {
    return this.held.size;
  }

  get watched(): number {
    return this.watchdog.size;
  }

  /** Turns a won attempt into a held lock of `queue`, which already counts it as a holder. */
  hold(request: LockRequest, queue: WaitQueue, grant: Grant): HeldLock {
    const { options } = request;
    if (this.context.closed) {
      queue.holderLeft(false);
      this.context.giveBack(request.fullKeys, grant.token);
      throw shutDown(request.label);
    }
    const lock = new HeldLock(this, {
      key: request.label,
      keys: request.names,
      fullKeys: request.fullKeys,
      token: grant.token,
      fences: grant.fences,
      ttl: options.ttl,
      autoRenew: options.autoRenew,
      expiresAt: grant.expiresAt,
      holdUntil: options.maxHold === undefined ? Infinity : grant.startedAt + options.maxHold,
    });
    this.held.set(lock, queue);
    this.watchdog.add(lock);
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

  async releaseLease(lock: HeldLock): Promise<ReleaseResult> {
    const { context } = this;
    // Sent before the next local waiter is woken, so its attempt queues behind this release on
    // the same connection: the hand-off costs one round trip, not two.
    const pending = context.storeCall(
      context.store.release(lock.fullKeys, lock.token),
      lock.key,
      'release',
    );
    const queue = this.held.get(lock);
    if (lock.markReleased()) this.forget(lock, 'released');
    const { result, waitersElsewhere } = await pending;
    queue?.noteRelease(waitersElsewhere);
    if (context.bus.listening) {
      const held = performance.now() - lock.acquiredAt;
      context.emit({ type: 'released', key: lock.key, held, result });
    }
    return result;
  }

  async extendLease(lock: HeldLock, ttl: number): Promise<void> {
    const { context } = this;
    if (ttl !== lock.ttl) validateLockOptions({ ttl }, `Extending lock "${lock.key}"`);
    const sentAt = performance.now();
    const lease = { keys: lock.fullKeys, token: lock.token, ttl };
    const [result] = await context.storeCall(context.store.extend([lease]), lock.key, 'extend');
    if (result !== 'extended') {
      this.lose(lock, result);
      throw new LockLostError(lock.key, result);
    }
    lock.expiresAt = Math.max(lock.expiresAt, sentAt + ttl - context.drift(ttl));
    this.watchdog.touch(lock);
    context.emit({ type: 'renewed', key: lock.key, ttl });
  }

  /** Stops renewal and releases every lock still held (shutdown). */
  async releaseAll(): Promise<void> {
    this.watchdog.stop();
    await Promise.allSettled([...this.held.keys()].map((lock) => lock.release()));
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
      this.context.emit({ type: 'lost', key: lock.key, held, reason });
    }
  }

  private forget(lock: HeldLock, how: 'released' | 'lost'): void {
    const queue = this.held.get(lock);
    this.held.delete(lock);
    this.watchdog.delete(lock);
    queue?.holderLeft(how === 'released');
  }
}
