import { LockError, LockStoreError } from '../errors/lock.errors.js';
import { afterPendingIo } from './after-pending-io.js';
import { TimedCall, type CallDeadlines } from './call-deadlines.js';

/** Hears of a failed store call before its caller does. */
export type StoreCallFailure<W extends string = string> = (
  error: LockError,
  key: string | undefined,
  what: W,
) => void;

/**
 * Bounds a store call by `deadlines.ms` and turns every failure into a `LockStoreError`. A
 * call that times out may still complete later; `late` then gets its result, so a late win can
 * be given back; `failed` hears of every failure before the caller.
 */
export function callStore<T, W extends string>(
  operation: Promise<T>,
  key: string | undefined,
  what: W,
  deadlines: CallDeadlines,
  late?: (result: T) => void,
  failed?: StoreCallFailure<W>,
  sentAt?: number,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const call = new StoreCall(deadlines, key, what, resolve, reject, late, failed);
    deadlines.track(call, sentAt);
    operation.then(
      (result) => call.answered(result),
      (error: unknown) => call.failed(error),
    );
  });
}

class StoreCall<T, W extends string> extends TimedCall {
  private timedOut = false;

  constructor(
    deadlines: CallDeadlines,
    private readonly key: string | undefined,
    private readonly what: W,
    private readonly resolve: (result: T) => void,
    private readonly reject: (error: unknown) => void,
    private readonly late?: (result: T) => void,
    private readonly onFailure?: StoreCallFailure<W>,
  ) {
    super(deadlines);
  }

  answered(result: T): void {
    this.end();
    if (this.timedOut) this.late?.(result);
    else this.resolve(result);
  }

  failed(error: unknown): void {
    this.end();
    if (!this.timedOut) this.fail(asStoreError(error, this.key, this.what));
  }

  expire(): void {
    afterPendingIo(() => {
      if (this.done) return;
      this.timedOut = true;
      const { key, what, deadlines } = this;
      this.fail(
        new LockStoreError(
          key,
          `${what} got no answer from the store within ${deadlines.ms} ms. Check the Redis connection.`,
        ),
      );
    });
  }

  private fail(error: LockError): void {
    this.onFailure?.(error, this.key, this.what);
    this.reject(error);
  }
}

function asStoreError(error: unknown, key: string | undefined, what: string): LockError {
  if (error instanceof LockError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new LockStoreError(key, `${what} failed in the store: ${reason}`, error);
}
