import { writerPatience } from '../../policy/wait-policy.js';
import type { AcquireAttempt, AcquireRequest } from '../../stores/lock-store.interface.js';
import { shutDown, type EngineContext } from '../engine-context.js';
import type { Lock } from '../lock.interface.js';
import type { LockLeases } from '../hold/lock-leases.js';
import {
  kindConflict,
  leaseTtlOf,
  newLockToken,
  type LockRequest,
} from '../request/lock-request.js';
import { WaitQueue } from '../wait/wait-queue.js';
import { HeldLock } from '../hold/held-lock.js';
import { AttemptCall, tryAcquire, type AttemptOwner } from './attempt-call.js';
import { createQueueDriver } from '../wait/queue-driver.js';
import { queueKey, type BusyKeys } from './busy-keys.js';
import type { AttemptOutcome, QueueDriver } from '../wait/wait.types.js';
import { isLate } from './attempt-call.js';
import { Refusals } from './refusals.js';
import { waitInQueue, type WaitingRoom } from '../wait/waiter.js';

/** What this process is doing with a set of keys: a queue, or one attempt or lock alone. */
export type KeyEntry = WaitQueue | AttemptCall | HeldLock;

/**
 * Takes locks: one attempt when nobody here waits, else a place in the key's local FIFO queue,
 * bounded by the request's `wait` and `signal`.
 */
export class LockAcquirer implements AttemptOwner {
  /** Acquire attempts sent and not yet answered; shutdown waits for them. */
  private inFlight = 0;
  private drained?: () => void;
  private attemptSettled(): void {
    if (--this.inFlight === 0) this.drained?.();
  }

  private readonly driver: QueueDriver;
  private readonly room: WaitingRoom = {
    attempt: (request, queueId) =>
      this.attempt(request, queueId, performance.now()).promise as Promise<AttemptOutcome>,
    hold: (request, queue, grant) => this.leases.hold(request, queue, grant),
    refusal: (request) => this.refusals.errorFor(request),
  };

  /** How long a waiting writer holds new readers back (see `writerPatience`). */
  private readonly patience: number;
  private readonly refusals: Refusals;

  constructor(
    private readonly context: EngineContext,
    private readonly leases: LockLeases,
    /**
     * The keys this process is busy with, and their queue. Until a second request here wants
     * them, a first attempt and the lock it wins stand here alone, without a queue: most locks
     * are uncontended, and a queue made and dropped for each of them does nothing.
     */
    private readonly busyKeys: BusyKeys<KeyEntry>,
  ) {
    this.patience = writerPatience(context.config.pollCap);
    this.refusals = new Refusals(context);
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
        : this.tryAlone(request, id);
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
  private tryAlone(request: LockRequest, id: string): Promise<Lock> {
    const call = this.attempt(request, undefined, request.startedAt);
    call.lone = id;
    this.busyKeys.set(id, call);
    return call.promise as Promise<Lock>;
  }

  /** A second request for keys a lone attempt or lock has: the queue they would have had. */
  private queueBehind(lone: AttemptCall | HeldLock, request: LockRequest): WaitQueue {
    const queue = this.createQueue(request);
    if (lone instanceof HeldLock) {
      lone.queue = queue;
      queue.holderJoined();
    } else {
      lone.lone = undefined;
      this.goFirstIn(lone, queue);
    }
    return queue;
  }

  /** One attempt outside a queue that nobody here holds or waits in; a busy key then queues. */
  private tryFirst(request: LockRequest, queue: WaitQueue): Promise<Lock> {
    const marking = marksWriter(request) ? queue.id : undefined;
    const call = this.attempt(request, marking, request.startedAt);
    // Set before any answer can arrive: answers come in a later tick.
    this.goFirstIn(call, queue);
    return call.promise as Promise<Lock>;
  }

  private goFirstIn(call: AttemptCall, queue: WaitQueue): void {
    queue.beginOutsideAttempt(call.startedAt);
    call.firstIn = queue;
  }

  /** A lone attempt's lock, also lone; a busy key gets a queue to wait in, as a first attempt. */
  private afterLoneAttempt(call: AttemptCall, id: string, outcome: AttemptOutcome): unknown {
    const { request } = call;
    if ('pttl' in outcome) {
      const queue = this.createQueue(request);
      this.goFirstIn(call, queue);
      return this.afterFirstAttempt(request, queue, outcome);
    }
    try {
      const lock = this.leases.hold(request, undefined, outcome.grant);
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
      return this.leases.hold(request, queue, outcome.grant);
    }
    if (this.context.bus.listening && !outcome.late) {
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
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
  }

  private enqueue(request: LockRequest, queue: WaitQueue, first: boolean): Promise<Lock> {
    if (this.context.closed) return Promise.reject(shutDown(request.label));
    return waitInQueue(request, queue, first, this.room);
  }

  /**
   * Sends one attempt. `startedAt` may be a little early (the request's start, for the first
   * attempt), which only shortens the lease counted.
   */
  private attempt(request: LockRequest, queue: string | undefined, startedAt: number): AttemptCall {
    const { context } = this;
    const token = newLockToken();
    const { fencing } = request.options;
    const { fullKeys: keys, kind } = request;
    const lease: AcquireRequest = { keys, token, ttl: leaseTtlOf(request), fencing, queue, kind };
    // Only a writer that will wait holds readers back (see `marksWriter`).
    if (marksWriter(request)) {
      (lease as { patience?: number }).patience = this.patience;
    }
    this.inFlight++;
    const call = new AttemptCall(this, context, request, token, startedAt);
    call.start(tryAcquire(context.store, lease), startedAt);
    return call;
  }

  /** @internal An attempt's answer, in the step it arrives: a lock for a first attempt, else the outcome. */
  attemptAnswered(call: AttemptCall, attempt: AcquireAttempt): unknown {
    this.attemptSettled();
    const { request, token, startedAt, firstIn, lone } = call;
    let outcome: AttemptOutcome;
    if (attempt.acquired) {
      const expiresAt = this.context.leaseEnd(startedAt, leaseTtlOf(request));
      const grant = { token, fences: attempt.fences, startedAt, expiresAt };
      outcome = isLate(grant) ? this.refusals.lateWin(request, grant) : { grant };
    } else {
      if (attempt.conflict !== undefined) {
        this.attemptLeft(call);
        throw kindConflict(request.label, request.kind, attempt.conflict);
      }
      this.refusals.noteNodes(request, attempt.nodes);
      outcome = { pttl: attempt.pttl };
    }
    if (firstIn) return this.afterFirstAttempt(request, firstIn, outcome);
    return lone === undefined ? outcome : this.afterLoneAttempt(call, lone, outcome);
  }

  /** @internal */
  attemptFailed(call: AttemptCall): void {
    this.attemptSettled();
    this.attemptLeft(call);
  }

  /** An attempt that gave no lock and no place in line leaves the keys' bookkeeping. */
  private attemptLeft(call: AttemptCall): void {
    call.firstIn?.endOutsideAttempt(false);
    if (call.lone !== undefined) this.busyKeys.deleteIf(call.lone, call);
  }

  private createQueue(request: LockRequest): WaitQueue {
    const queue = new WaitQueue(this.driver, request);
    this.busyKeys.set(queueKey(request), queue);
    return queue;
  }
}

/**
 * A writer that will wait marks the key, holding new readers back, from its first attempt on.
 * The mark carries its queue's id, so that the queue takes it out of the store when it stops
 * waiting; a writer that gave up would otherwise hold readers back for its whole patience. Such
 * a writer therefore always has a queue, and sends its id with every attempt.
 */
function marksWriter({ kind, options }: LockRequest): boolean {
  return kind.type === 'write' && options.wait > 0;
}
