import { LockError, LockStoreError } from '../errors/lock.errors.js';
import { afterPendingIo } from './after-pending-io.js';

/**
 * Bounds a store call by `timeoutMs` and turns every failure into a `LockStoreError`. A call
 * that times out may still complete later; `late` then gets its result, so a late win can be
 * given back.
 */
export function callStore<T>(
  operation: Promise<T>,
  key: string | undefined,
  what: string,
  timeoutMs: number,
  late?: (result: T) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(
      () =>
        afterPendingIo(() => {
          timedOut = true;
          reject(
            new LockStoreError(
              key,
              `${what} got no answer from the store within ${timeoutMs} ms. Check the Redis connection.`,
            ),
          );
        }),
      timeoutMs,
    );
    operation.then(
      (result) => {
        clearTimeout(timer);
        if (timedOut) late?.(result);
        else resolve(result);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!timedOut) reject(asStoreError(error, key, what));
      },
    );
  });
}

function asStoreError(error: unknown, key: string | undefined, what: string): Error {
  if (error instanceof LockError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new LockStoreError(key, `${what} failed in the store: ${reason}`, error);
}
