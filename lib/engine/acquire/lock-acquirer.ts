import { LockOverloadError, type LockError } from '../../errors/lock.errors.js';
import { writerPatience } from '../../policy/wait-policy.js';
import type {
  AcquireAttempt,
  AcquireRequest,
  LockStore,
} from '../../stores/lock-store.interface.js';
import { shutDown, type EngineContext } from '../engine-context.js';
import type { BusyKeys } from '../lock-engine.js';
import type { Lock } from '../lock.interface.js';
import {
  leaseEnd,
  leaseTtlOf,
  newLockToken,
  queueKey,
  type LockRequest,
} from '../request/lock-request.js';
import { StoreCall } from '../store-calls/store-call.js';
import type { WaitQueue } from '../wait/wait-queue.js';
import { HeldLock, type HoldParts } from '../hold/held-lock.js';
import { KeyQueues } from '../wait/key-queues.js';
import type { AttemptOutcome, Grant } from '../wait/wait.types.js';
import { kindConflict, lateGrantError, Refusals } from './refusals.js';

/** What this process is doing with a set of keys: a queue, or one attempt or lock alone. */
export type KeyEntry = WaitQueue | AttemptCall | HeldLock;

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
    private readonly busyKeys: BusyKeys<KeyEntry>,
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
    queue?.holderLeft(false);
    context.giveBack(request.fullKeys, grant.token, request.kind);
    if (context.closed) throw shutDown(request.label);
    throw lateGrantError(request, performance.now() - grant.startedAt);
  }
  const lock = new HeldLock(parts, queue, request, grant);
  watchdog.add(lock, grant.startedAt);
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

/**
 * One acquire attempt in flight. Its promise settles with the attempt's outcome, read in the
 * step the answer arrives: a grant (still within its lease), the holder's remaining lease, or
 * at once again after a late grant (given back); a kind conflict rejects.
 */
export class AttemptCall extends StoreCall<AcquireAttempt, AttemptOutcome> {
  /** The queue of a first attempt, made outside it (nobody here held, waited or tried). */
  outsideQueue?: WaitQueue;
  /** The busy keys entry of an unqueued first attempt, while it has no queue. */
  busyKey?: string;

  constructor(
    private readonly context: EngineContext,
    private readonly refusals: Refusals,
    readonly request: LockRequest,
    readonly token: string,
    /** When the attempt was sent (`performance.now()`), or a little before. */
    readonly startedAt: number,
  ) {
    super(context.deadlines, request.label, 'acquire', context.health);
  }

  protected override map(attempt: AcquireAttempt): AttemptOutcome {
    const { context, refusals, request, token, startedAt } = this;
    attemptSettled(context);
    if (attempt.acquired) {
      const expiresAt = leaseEnd(context.store, startedAt, leaseTtlOf(request));
      const grant = { token, fences: attempt.fences, startedAt, expiresAt };
      return isLate(grant) ? refusals.lateGrant(request, grant) : { grant };
    }
    if (attempt.conflict !== undefined) {
      throw kindConflict(request.label, request.kind, attempt.conflict);
    }
    refusals.noteNodes(request, attempt.nodes);
    return { pttl: attempt.pttl };
  }

  /**
   * A failed or unanswered attempt may still have taken the keys (the reply, not the command,
   * was lost), so they are given back once the store is done with it: a script's NOSCRIPT
   * fallback can run it again after a timeout, and the give-back must land after that.
   */
  protected override onFailure(error: LockError): void {
    attemptSettled(this.context);
    // A store that refused the call before sending it says so (`unsent`).
    if ((error.cause as { unsent?: boolean } | undefined)?.unsent) return;
    const { fullKeys, kind } = this.request;
    const giveBack = (): void => this.context.giveBack(fullKeys, this.token, kind);
    this.operation!.then(giveBack, giveBack);
  }
}

/**
 * Sends one attempt with the request's own options. `startedAt` may be a little early (the
 * request's start, for the first attempt), which only shortens the lease counted. `queue`: the
 * id of the queue it tries for, which the store keeps in the key's line when it is busy.
 */
export function sendAttempt(
  context: EngineContext,
  refusals: Refusals,
  request: LockRequest,
  queue: string | undefined,
  startedAt: number,
): AttemptCall {
  const token = newLockToken();
  const { fencing } = request.options;
  const { fullKeys: keys, kind } = request;
  const lease: AcquireRequest = { keys, token, ttl: leaseTtlOf(request), fencing, queue, kind };
  // Only a writer that will wait holds readers back (see `marksWriter`).
  if (marksWriter(request)) {
    (lease as { patience?: number }).patience = writerPatience(context.config.pollCap);
  }
  context.attemptsOut++;
  const call = new AttemptCall(context, refusals, request, token, startedAt);
  call.start(tryAcquire(context.store, lease), startedAt);
  return call;
}

/** An attempt sent by `sendAttempt` has its answer, or failed. */
function attemptSettled(context: EngineContext): void {
  if (--context.attemptsOut === 0) context.attemptsDone?.();
}

/**
 * A writer that will wait marks the key, holding new readers back, from its first attempt on.
 * The mark carries its queue's id, so that the queue takes it out of the store when it stops
 * waiting; a writer that gave up would otherwise hold readers back for its whole patience. Such
 * a writer therefore always has a queue, and sends its id with every attempt.
 */
export function marksWriter({ kind, options }: LockRequest): boolean {
  return kind.type === 'write' && options.wait > 0;
}

/** The store's attempt; a store that throws rather than rejects fails the attempt all the same. */
export function tryAcquire(store: LockStore, lease: AcquireRequest): Promise<AcquireAttempt> {
  try {
    return store.tryAcquire(lease);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** True once a grant's lease may be over in the store: it must not be handed to a holder. */
export function isLate(grant: Grant): boolean {
  return performance.now() >= grant.expiresAt;
}
