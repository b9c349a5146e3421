import { LockError, LockStoreError } from '../errors/lock.errors.js';
import { afterPendingIo } from './after-pending-io.js';
import type { CallDeadlines } from './call-deadlines.js';

/**
 * Bounds a store call by `deadlines.ms` and turns every failure into a
 * `LockStoreError`. A call that times out may still complete later; `late` then gets its
 * result, so a late win can be given back; `failed` hears of every failure before the caller.
 */
export function callStore<T>(
  operation: Promise<T>,
  key: string | undefined,
  what: string,
  deadlines: CallDeadlines,
  hooks: { late?: (result: T) => void; failed?: (error: LockError) => void } = {},
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const fail = (error: LockError): void => {
      hooks.failed?.(error);
      reject(error);
    };
    const call = deadlines.start(() =>
      afterPendingIo(() => {
        if (call.done) return;
        timedOut = true;
        fail(
          new LockStoreError(
            key,
            `${what} got no answer from the store within ${deadlines.ms} ms. Check the Redis connection.`,
          ),
        );
      }),
    );
    operation.then(
      (result) => {
        call.end();
        if (timedOut) hooks.late?.(result);
        else resolve(result);
      },
      (error: unknown) => {
        call.end();
        if (!timedOut) fail(asStoreError(error, key, what));
      },
    );
  });
}

function asStoreError(error: unknown, key: string | undefined, what: string): LockError {
  if (error instanceof LockError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new LockStoreError(key, `${what} failed in the store: ${reason}`, error);
}
