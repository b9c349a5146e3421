import { shutDown, type EngineContext, queueKey, type BusyKeys } from '../engine-context.js';
import type { Lock } from '../lock.interface.js';
import type { LockRequest } from '../request/lock-request.js';
import { WaitQueue } from '../wait/wait-queue.js';
import { HeldLock, type HoldParts } from '../hold/held-lock.js';
import { AttemptCall, isLate, marksWriter, sendAttempt } from './attempt-call.js';
import { createQueueDriver } from '../wait/queue-driver.js';
import type { AttemptOutcome, Grant, QueueDriver } from '../wait/wait.types.js';
import { lateGrantError, Refusals } from './refusals.js';
import { waitInQueue, type WaiterParts } from '../wait/waiter.js';

/** What this process is doing with a set of keys: a queue, or one attempt or lock alone. */
export type KeyEntry = WaitQueue | AttemptCall | HeldLock;

/**
 * Takes locks: one attempt when nobody here waits, else a place in the key's local FIFO queue,
 * bounded by the request's `wait` and `signal`.
 */
export class LockAcquirer {
  private readonly driver: QueueDriver;
  private readonly refusals: Refusals;
  /** What a waiter uses to try, and to turn a grant into a lock. */
  private readonly waiting: WaiterParts;

  constructor(
    private readonly context: EngineContext,
    private readonly hold: HoldParts,
    /**
     * The keys this process is busy with, and their queue. Until a second request here wants
     * them, a first attempt and the lock it wins stand here alone, without a queue: most locks
     * are uncontended, and a queue made and dropped for each of them does nothing.
     */
    private readonly busyKeys: BusyKeys<KeyEntry>,
  ) {
    this.refusals = new Refusals(context);
    this.waiting = { context, hold, refusals: this.refusals };
    this.driver = createQueueDriver(context, busyKeys);
  }

  get queueCount(): number {
    return this.busyKeys.size;
  }

  /** Not async, so a queued request's lock reaches the caller in as few ticks as possible. */
  take(request: LockRequest): Promise<Lock> {
    const { signal, wait } = request.options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.context.closed) return Promise.reject(shutDown(request.label));
    const id = queueKey(request);
    const entry = this.busyKeys.get(id);
    if (!entry) {
      return marksWriter(request)
        ? this.tryFirst(request, this.createQueue(request))
        : this.tryUnqueued(request, id);
    }
    const queue = entry instanceof WaitQueue ? entry : this.queueBehind(entry, request);
    if (wait === 0 && queue.full) return Promise.reject(this.refusals.errorFor(request));
    if (wait > 0 && !queue.free) return this.enqueue(request, queue, false);
    return this.tryFirst(request, queue);
  }

  /**
   * The first attempt on keys nobody here wants: no queue unless a second request comes. The
   * answer becomes the caller's lock in the step it arrives.
   */
  private tryUnqueued(request: LockRequest, id: string): Promise<Lock> {
    const call = sendAttempt(this.context, this.refusals, request, undefined, request.startedAt);
    call.busyKey = id;
    this.busyKeys.set(id, call);
    return this.afterAttempt(call);
  }

  /**
   * A first attempt's outcome, as it arrives: the caller's lock, or a place in the queue. The
   * queue is read then, since a second request may have given an unqueued attempt one meanwhile.
   */
  private afterAttempt(call: AttemptCall): Promise<Lock> {
    return call.promise.then(
      (outcome) =>
        call.outsideQueue
          ? this.afterFirstAttempt(call.request, call.outsideQueue, outcome)
          : this.afterUnqueuedAttempt(call, call.busyKey!, outcome),
      (error: unknown) => {
        this.attemptLeft(call);
        throw error;
      },
    );
  }

  /** A second request for keys an unqueued attempt or lock has: the queue they would have had. */
  private queueBehind(unqueued: AttemptCall | HeldLock, request: LockRequest): WaitQueue {
    const queue = this.createQueue(request);
    if (unqueued instanceof HeldLock) {
      unqueued.queue = queue;
      queue.holderJoined();
    } else {
      unqueued.busyKey = undefined;
      this.countOutside(unqueued, queue);
    }
    return queue;
  }

  /** One attempt outside a queue that nobody here holds or waits in; a busy key then queues. */
  private tryFirst(request: LockRequest, queue: WaitQueue): Promise<Lock> {
    const marking = marksWriter(request) ? queue.id : undefined;
    const call = sendAttempt(this.context, this.refusals, request, marking, request.startedAt);
    // Set before any answer can arrive: answers come in a later tick.
    this.countOutside(call, queue);
    return this.afterAttempt(call);
  }

  /** `queue` counts `call` as an attempt in flight outside it. */
  private countOutside(call: AttemptCall, queue: WaitQueue): void {
    queue.beginOutsideAttempt(call.startedAt);
    call.outsideQueue = queue;
  }

  /**
   * An unqueued attempt's lock, also unqueued; a busy key gets a queue to wait in, as a first
   * attempt.
   */
  private afterUnqueuedAttempt(
    call: AttemptCall,
    id: string,
    outcome: AttemptOutcome,
  ): Lock | Promise<Lock> {
    const { request } = call;
    if ('pttl' in outcome) {
      const queue = this.createQueue(request);
      this.countOutside(call, queue);
      return this.afterFirstAttempt(request, queue, outcome);
    }
    try {
      const lock = holdLock(this.hold, request, undefined, outcome.grant);
      this.busyKeys.set(id, lock);
      return lock;
    } catch (error) {
      this.busyKeys.deleteIf(id, call);
      throw error;
    }
  }

  private afterFirstAttempt(
    request: LockRequest,
    queue: WaitQueue,
    outcome: AttemptOutcome,
  ): Lock | Promise<Lock> {
    if ('grant' in outcome) {
      queue.endOutsideAttempt(true);
      return holdLock(this.hold, request, queue, outcome.grant);
    }
    if (this.context.bus.observed && !outcome.late) {
      this.context.emit({ type: 'contended', key: request.label, pttl: outcome.pttl });
    }
    if (request.options.wait === 0) {
      queue.endOutsideAttempt(false);
      throw this.refusals.errorFor(request);
    }
    // The store has its mark and listener entry under the queue's id: the queue takes them out.
    if (marksWriter(request)) queue.joinedLine();
    const waiting = this.enqueue(request, queue, true);
    queue.endOutsideAttempt(false);
    return waiting;
  }

  /** Fails every waiter and waits for attempts already sent (shutdown). */
  async stop(error: Error): Promise<void> {
    for (const entry of this.busyKeys.values()) {
      if (entry instanceof WaitQueue) entry.failAll(error);
    }
    await this.context.attemptsAnswered();
  }

  private enqueue(request: LockRequest, queue: WaitQueue, first: boolean): Promise<Lock> {
    if (this.context.closed) return Promise.reject(shutDown(request.label));
    return waitInQueue(request, queue, first, this.waiting);
  }

  /** An attempt that gave no lock and no place in line leaves the keys' bookkeeping. */
  private attemptLeft(call: AttemptCall): void {
    call.outsideQueue?.endOutsideAttempt(false);
    if (call.busyKey !== undefined) this.busyKeys.deleteIf(call.busyKey, call);
  }

  private createQueue(request: LockRequest): WaitQueue {
    const queue = new WaitQueue(this.driver, request);
    this.busyKeys.set(queueKey(request), queue);
    return queue;
  }
}

/**
 * Turns a won attempt into a held lock of `queue` (which already counts it as a holder), if
 * any, watched from now on; a grant that aged past its lease, or came after shutdown, is given
 * back instead.
 */
export function holdLock(
  parts: HoldParts,
  request: LockRequest,
  queue: WaitQueue | undefined,
  grant: Grant,
): HeldLock {
  const { context, watchdog } = parts;
  // A grant checked when its answer came may still have aged in the ticks since.
  if (context.closed || isLate(grant)) {
    if (grant.from) watchdog.delete(grant.from);
    queue?.holderLeft(false);
    context.giveBack(request.fullKeys, grant.token, request.kind);
    if (context.closed) throw shutDown(request.label);
    throw lateGrantError(request, performance.now() - grant.startedAt);
  }
  const lock = new HeldLock(parts, queue, request, grant);
  if (grant.from) watchdog.transfer(grant.from, lock);
  else watchdog.add(lock, grant.startedAt);
  if (context.bus.observed) {
    const waited = performance.now() - request.startedAt;
    context.emit({ type: 'acquired', key: lock.key, waited, fence: lock.fence });
  }
  const { signal } = request.options;
  if (signal?.aborted) {
    void lock.release().catch(() => undefined);
    throw signal.reason;
  }
  return lock;
}
