import { LockStoreError } from '../../errors/lock.errors.js';
import type { Lock } from '../lock.interface.js';
import { leaseTtlOf, type LockRequest } from '../request/lock-request.js';
import { SLOW_STORE_MS } from '../../policy/wait-policy.js';
import { MAX_TTL } from '../request/lock-options.validation.js';
import type { WaitQueue } from '../wait/wait-queue.js';
import type { Waiter } from '../wait/wait.types.js';
import type { EngineContext } from '../store-calls/engine-context.js';
import { holdLock, type HoldParts } from '../hold/held-lock.js';
import { sendAttempt } from '../store-calls/lock-calls.js';
import type { Refusals } from '../store-calls/refusals.js';

/** What a waiter uses: the store, through attempts; the hold parts, to hold what it wins. */
export interface WaiterParts {
  readonly context: EngineContext;
  readonly hold: HoldParts;
  /** The error for a request that waited in vain: `LockBusyError`, unless its grants came too late. */
  readonly refusals: Refusals;
}

/**
 * Waits in `queue` (at its head when `first`) until the request gets the lock, its `wait`
 * runs out or its `signal` aborts; the waiter leaves the queue then.
 */
export function waitInQueue(
  request: LockRequest,
  queue: WaitQueue,
  first: boolean,
  parts: WaiterParts,
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
      takeOverTtl: request.options.fencing ? undefined : leaseTtlOf(request),
      attempt: (queueId) =>
        sendAttempt(parts.context, parts.refusals, request, queueId, performance.now()).promise,
      deliver: (grant) => {
        finish();
        try {
          resolve(holdLock(parts.hold, request, queue, grant));
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
      timer = setTimeout(
        () => giveUp(waitRanOut(request, queue, parts.refusals)),
        Math.max(1, remaining),
      );
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
function waitRanOut(request: LockRequest, queue: WaitQueue, refusals: Refusals): Error {
  const unanswered = queue.unansweredSince();
  const { wait } = request.options;
  const pending = unanswered === undefined ? 0 : performance.now() - unanswered;
  if (pending < Math.max(wait / 2, SLOW_STORE_MS)) return refusals.errorFor(request);
  return new LockStoreError(
    request.label,
    `the store has not answered for ${Math.round(pending)} ms of the wait of ${wait} ms, so this ` +
      'may not be contention. Check the Redis connection.',
  );
}
