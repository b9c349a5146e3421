import { LockOverloadError } from '../../errors/lock.errors.js';
import { holdLock, type HoldParts } from '../hold/held-lock.js';
import type { Lock } from '../lock.interface.js';
import { leaseTtlOf, queueKey, type LockRequest } from '../request/lock-request.js';
import { shutDown, type EngineContext } from '../store-calls/engine-context.js';
import { marksWriter, sendAttempt, type AttemptCall } from '../store-calls/lock-calls.js';
import { Refusals } from '../store-calls/refusals.js';
import type { AttemptOutcome, KeyTable } from '../wait/wait.types.js';
import { KeyQueues, type KeyEntry } from './key-queues.js';

/**
 * Takes locks: one attempt without a queue when nobody here wants the keys, else a place in
 * their queue (`KeyQueues`), bounded by the request's `wait` and `signal`.
 */
export class LockAcquirer {
  private readonly refusals: Refusals;
  private readonly queues: KeyQueues;

  constructor(
    private readonly context: EngineContext,
    private readonly hold: HoldParts,
    /** A first attempt, and the lock it wins, stand here alone until a second request comes. */
    private readonly busyKeys: KeyTable<KeyEntry>,
  ) {
    this.refusals = new Refusals(context);
    this.queues = new KeyQueues(context, hold, busyKeys, this.refusals);
  }

  get queueCount(): number {
    return this.busyKeys.size;
  }

  /** Not async, so a queued request's lock reaches the caller in as few ticks as possible. */
  take(request: LockRequest): Promise<Lock> {
    const { signal } = request.options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.context.closed) return Promise.reject(shutDown(request.label));
    const overload = this.overload(request);
    if (overload) return Promise.reject(overload);
    const id = queueKey(request);
    const entry = this.busyKeys.get(id);
    if (entry || marksWriter(request)) return this.queues.take(request, entry);
    return this.tryUnqueued(request, id);
  }

  /** The refusal of a new auto-renewed lease that renewal here could not keep up with. */
  private overload({ label, options }: LockRequest): LockOverloadError | undefined {
    const { watchdog } = this.hold;
    if (!options.autoRenew || watchdog.fits(leaseTtlOf({ options }))) return undefined;
    return new LockOverloadError(label, watchdog.demand, watchdog.throughput.rate!);
  }

  /** Fails every waiter and waits for attempts already sent (shutdown). */
  async stop(error: Error): Promise<void> {
    this.queues.failAll(error);
    await this.context.attemptsAnswered();
  }

  /**
   * The first attempt on keys nobody here wants: no queue unless a second request comes. The
   * answer becomes the caller's lock in the step it arrives, or a place in the queue a second
   * request may have made meanwhile (read then).
   */
  private tryUnqueued(request: LockRequest, id: string): Promise<Lock> {
    const call = sendAttempt(this.context, this.refusals, request, undefined, request.startedAt);
    call.busyKey = id;
    this.busyKeys.set(id, call);
    return call.promise.then(
      (outcome) =>
        call.outsideQueue
          ? this.queues.afterFirstAttempt(request, call.outsideQueue, outcome)
          : this.afterUnqueuedAttempt(call, id, outcome),
      (error: unknown) => {
        // No lock and no place in line: the attempt leaves the keys' bookkeeping.
        call.outsideQueue?.endOutsideAttempt(false);
        if (call.busyKey !== undefined) this.busyKeys.deleteIf(call.busyKey, call);
        throw error;
      },
    );
  }

  /** An unqueued attempt's lock, also unqueued; busy keys get a queue to wait in. */
  private afterUnqueuedAttempt(
    call: AttemptCall,
    id: string,
    outcome: AttemptOutcome,
  ): Lock | Promise<Lock> {
    if ('pttl' in outcome) return this.queues.afterBusy(call, outcome);
    try {
      const lock = holdLock(this.hold, call.request, undefined, outcome.grant);
      this.busyKeys.set(id, lock);
      return lock;
    } catch (error) {
      this.busyKeys.deleteIf(id, call);
      throw error;
    }
  }
}

/**
 * The engine's table of the keys this process is busy with (see `KeyEntry` in the acquirer):
 * the acquirer fills it, and a queue or an unqueued lock that ends takes itself out. Keys map to
 * slot numbers, and entries sit in an array of slots, cleared and reused; decision 0012 says why
 * not a `Map` of entries.
 */
export class BusyKeys<V extends object> implements KeyTable<V> {
  private readonly slotOf = new Map<string, number>();
  private readonly slots: (V | undefined)[] = [];
  private readonly freeSlots: number[] = [];

  get size(): number {
    return this.slotOf.size;
  }

  get(key: string): V | undefined {
    const slot = this.slotOf.get(key);
    return slot === undefined ? undefined : this.slots[slot];
  }

  set(key: string, entry: V): void {
    const slot = this.slotOf.get(key);
    if (slot !== undefined) {
      this.slots[slot] = entry;
      return;
    }
    const free = this.freeSlots.length > 0 ? this.freeSlots.pop()! : this.slots.length;
    this.slots[free] = entry;
    this.slotOf.set(key, free);
  }

  /** Drops `key` if its entry is still `entry` (another may have taken its place). */
  deleteIf(key: string, entry: V): void {
    const slot = this.slotOf.get(key);
    if (slot === undefined || this.slots[slot] !== entry) return;
    this.slotOf.delete(key);
    this.slots[slot] = undefined;
    this.freeSlots.push(slot);
    // After a burst of many keys at once, let the grown arrays go.
    if (this.slotOf.size === 0 && this.slots.length > 1024) {
      this.slots.length = 0;
      this.freeSlots.length = 0;
    }
  }

  values(): V[] {
    return [...this.slotOf.values()].map((slot) => this.slots[slot]!);
  }
}
