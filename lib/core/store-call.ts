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
 * What the caller of a store call does in the very step the store answers. Doing it there
 * rather than in a `.then` of the returned promise saves a promise and a tick per call, and
 * every acquire and release is one.
 */
export interface CallHooks<T, R> {
  /** Turns the answer into the call's value (the answer itself when absent); a throw rejects. */
  readonly map?: (result: T) => R | PromiseLike<R>;
  /** Bookkeeping on failure, before the caller hears of it. */
  readonly failed?: (error: LockError) => void;
  /** The answer of a call that had timed out, so that a late win can be given back. */
  readonly late?: (result: T) => void;
  /** When the call was sent (`performance.now()`): its deadline counts from there. */
  readonly sentAt?: number;
}

const NO_HOOKS: CallHooks<unknown, unknown> = Object.freeze({});

/**
 * Bounds a store call by `deadlines.ms` and turns every failure into a `LockStoreError`, which
 * `report` hears of first. A call that times out may still complete later: `hooks.late` then
 * gets its result.
 */
export function callStore<T, R = T, W extends string = string>(
  operation: Promise<T>,
  key: string | undefined,
  what: W,
  deadlines: CallDeadlines,
  hooks = NO_HOOKS as CallHooks<T, R>,
  report?: StoreCallFailure<W>,
): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    const call = new StoreCall(deadlines, key, what, hooks, resolve, reject, report);
    deadlines.track(call, hooks.sentAt);
    operation.then(
      (result) => call.answered(result),
      (error: unknown) => call.failed(error),
    );
  });
}

class StoreCall<T, R, W extends string> extends TimedCall {
  private timedOut = false;

  constructor(
    deadlines: CallDeadlines,
    private readonly key: string | undefined,
    private readonly what: W,
    private readonly hooks: CallHooks<T, R>,
    private readonly resolve: (result: R | PromiseLike<R>) => void,
    private readonly reject: (error: unknown) => void,
    private readonly report?: StoreCallFailure<W>,
  ) {
    super(deadlines);
  }

  answered(result: T): void {
    this.end();
    const { map, late } = this.hooks;
    if (this.timedOut) return late?.(result);
    if (!map) return this.resolve(result as unknown as R);
    try {
      this.resolve(map(result));
    } catch (error) {
      this.reject(error);
    }
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
    this.report?.(error, this.key, this.what);
    this.hooks.failed?.(error);
    this.reject(error);
  }
}

function asStoreError(error: unknown, key: string | undefined, what: string): LockError {
  if (error instanceof LockError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new LockStoreError(key, `${what} failed in the store: ${reason}`, error);
}
