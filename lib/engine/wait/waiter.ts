import { LockStoreError } from '../../errors/lock.errors.js';
import type { Lock } from '../lock.interface.js';
import { canInherit, leaseTtlOf, type LockRequest } from '../request/lock-request.js';
import { SILENCE_FLOOR } from '../../policy/wait-policy.js';
import { MAX_TTL } from '../request/lock-options.validation.js';
import type { WaitQueue } from './wait-queue.js';
import type { AttemptOutcome, Grant, Waiter } from './wait.types.js';

/** What a request waiting in a queue asks of the acquirer. */
export interface WaitingRoom {
  /** One attempt with the request's own options, in the turn of queue `queueId`. */
  attempt(request: LockRequest, queueId: string): Promise<AttemptOutcome>;
  /** The caller's lock for a lease granted to the request. */
  hold(request: LockRequest, queue: WaitQueue, grant: Grant): Lock;
  /** The error for a request that waited in vain: `LockBusyError`, unless its wins came too late. */
  refusal(request: LockRequest): Error;
}

/**
 * Waits in `queue` (at its head when `first`) until the request gets the lock, its `wait`
 * runs out or its `signal` aborts; the waiter leaves the queue then.
 */
export function waitInQueue(
  request: LockRequest,
  queue: WaitQueue,
  first: boolean,
  room: WaitingRoom,
): Promise<Lock> {
  const { wait, signal } = request.options;
  return new Promise<Lock>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = (): void => {
      waiter.settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const giveUp = (error: unknown): void => {
      if (waiter.settled) return;
      finish();
      queue.withdraw(waiter);
      reject(error);
    };
    const onAbort = (): void => giveUp(signal!.reason);
    const waiter: Waiter & { settled: boolean } = {
      settled: false,
      canInherit: (grant) => canInherit(request, grant),
      // A release sets a successor's lease for an unfenced mutex only.
      successorTtl:
        request.options.fencing || request.kind.type !== 'mutex' ? undefined : leaseTtlOf(request),
      attempt: (queueId) => room.attempt(request, queueId),
      deliver: (grant) => {
        finish();
        try {
          resolve(room.hold(request, queue, grant));
        } catch (error) {
          reject(error);
        }
      },
      fail: (error) => {
        finish();
        reject(error);
      },
    };
    const remaining = request.startedAt + wait - performance.now();
    if (remaining < MAX_TTL) {
      timer = setTimeout(() => giveUp(waitRanOut(request, queue, room)), Math.max(1, remaining));
    }
    // The signal may have fired while the first attempt was in flight: no event comes then.
    if (signal?.aborted) return giveUp(signal.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    queue.enqueue(waiter, first);
  });
}

/**
 * Busy, unless the store left the queue without an answer for much of the wait, and for longer
 * than any healthy round trip takes (a short wait is mostly one call in flight).
 */
function waitRanOut(request: LockRequest, queue: WaitQueue, room: WaitingRoom): Error {
  const silent = queue.silentSince();
  const { wait } = request.options;
  const pending = silent === undefined ? 0 : performance.now() - silent;
  if (pending < Math.max(wait / 2, SILENCE_FLOOR)) return room.refusal(request);
  return new LockStoreError(
    request.label,
    `the store has not answered for ${Math.round(pending)} ms of the wait of ${wait} ms, so this ` +
      'may not be contention. Check the Redis connection.',
  );
}
