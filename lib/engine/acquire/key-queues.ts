import { HeldLock, holdLock, type HoldParts } from '../hold/held-lock.js';
import type { Lock } from '../lock.interface.js';
import { queueKey, type LockRequest } from '../request/lock-request.js';
import { shutDown, type EngineContext } from '../store-calls/engine-context.js';
import { type AttemptCall, marksWriter, sendAttempt } from '../store-calls/lock-calls.js';
import { createQueueDriver } from '../store-calls/queue-driver.js';
import type { Refusals } from '../store-calls/refusals.js';
import { WaitQueue, type QueueDriver } from '../wait/wait-queue.js';
import type { AttemptOutcome, KeyTable } from '../wait/wait.types.js';
import { waitInQueue, type WaiterParts } from './waiter.js';

/** What this process is doing with a set of keys: a queue, or one attempt or lock alone. */
export type KeyEntry = WaitQueue | AttemptCall | HeldLock;

/**
 * The queues of the keys this process is busy with, one per set of keys (`queueKey`): made when
 * a second request here wants the keys of an unqueued attempt or lock, when such an attempt
 * finds them busy, or for a writer that will wait. A request waits in its keys' queue, or tries
 * outside it while nobody here holds or waits.
 */
export class KeyQueues {
  private readonly driver: QueueDriver;
  /** What a waiter uses to try, and to turn a grant into a lock. */
  private readonly waiting: WaiterParts;

  constructor(
    private readonly context: EngineContext,
    private readonly hold: HoldParts,
    private readonly busyKeys: KeyTable<KeyEntry>,
    private readonly refusals: Refusals,
  ) {
    this.waiting = { context, hold, refusals };
    this.driver = createQueueDriver(context, busyKeys);
  }

  /** A request for keys this process is busy with (their `entry`), or a waiting writer's first. */
  take(request: LockRequest, entry: KeyEntry | undefined): Promise<Lock> {
    if (!entry) return this.tryFirst(request, this.createQueue(request));
    const { wait } = request.options;
    const queue = entry instanceof WaitQueue ? entry : this.queueBehind(entry, request);
    if (wait === 0 && queue.full) return Promise.reject(this.refusals.errorFor(request));
    if (wait > 0 && !queue.free) return this.enqueue(request, queue, false);
    return this.tryFirst(request, queue);
  }

  /** An unqueued attempt found its keys busy: it waits in a queue, as a first attempt. */
  afterBusy(call: AttemptCall, outcome: AttemptOutcome): Lock | Promise<Lock> {
    const queue = this.createQueue(call.request);
    this.countOutside(call, queue);
    return this.afterFirstAttempt(call.request, queue, outcome);
  }

  /** A first attempt's outcome: its lock, or a place in `queue`. */
  afterFirstAttempt(
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

  /** Fails every waiter (shutdown). */
  failAll(error: Error): void {
    for (const entry of this.busyKeys.values()) {
      if (entry instanceof WaitQueue) entry.failAll(error);
    }
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
    return call.promise.then(
      (outcome) => this.afterFirstAttempt(request, queue, outcome),
      (error: unknown) => {
        queue.endOutsideAttempt(false);
        throw error;
      },
    );
  }

  /** `queue` counts `call` as an attempt in flight outside it. */
  private countOutside(call: AttemptCall, queue: WaitQueue): void {
    queue.beginOutsideAttempt(call.startedAt);
    call.outsideQueue = queue;
  }

  private enqueue(request: LockRequest, queue: WaitQueue, first: boolean): Promise<Lock> {
    if (this.context.closed) return Promise.reject(shutDown(request.label));
    return waitInQueue(request, queue, first, this.waiting);
  }

  private createQueue(request: LockRequest): WaitQueue {
    const queue = new WaitQueue(this.driver, request);
    this.busyKeys.set(queueKey(request), queue);
    return queue;
  }
}
