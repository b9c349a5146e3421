import { LockError, LockStoreError } from '../../errors/lock.errors.js';
import { afterPendingIo } from '../../stores/after-pending-io.js';
import { TimedCall, type CallDeadlines } from './call-deadlines.js';
import type { LockEvent } from '../lock.events.js';
import type { StoreHealthMonitor } from '../engine-context.js';

/** What a store call does, as the `error` event names it. */
export type StoreOperation = Extract<LockEvent, { type: 'error' }>['operation'];

/**
 * One store call, bounded by `deadlines.ms`: its promise settles with the answer as `map` reads
 * it, or with a `LockStoreError` (which `health` hears of first) on failure or timeout. A call
 * that timed out may still be answered later: `lateAnswer` then gets the answer.
 *
 * Acquires and releases subclass it, so that a call is one object with its own state rather
 * than a call plus a closure per hook: this is on the path of every lock.
 */
export abstract class StoreCall<T, R> extends TimedCall {
  /** Settles `promise`; set by the executor, which runs inside the constructor. */
  private resolve!: (value: R | PromiseLike<R>) => void;
  private reject!: (error: unknown) => void;
  private timedOut = false;
  readonly promise: Promise<R>;

  constructor(
    deadlines: CallDeadlines,
    readonly key: string | undefined,
    readonly what: StoreOperation,
    private readonly health?: StoreHealthMonitor,
  ) {
    super(deadlines);
    this.promise = new Promise<R>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** The store's own promise, which may settle after the call timed out. */
  protected operation?: Promise<T>;

  /** Times the call from `sentAt` (default: now) and listens for `operation`'s answer. */
  start(operation: Promise<T>, sentAt?: number): Promise<R> {
    this.operation = operation;
    this.deadlines.track(this, sentAt);
    operation.then(
      (result) => this.answered(result),
      (error: unknown) => this.failed(error),
    );
    return this.promise;
  }

  /** The answer as the call's value, in the step it arrives; a throw rejects. */
  protected abstract map(result: T): R | PromiseLike<R>;

  /** Bookkeeping on failure, before the caller hears of it. */
  protected onFailure(_error: LockError): void {}

  /** The answer of a call that had timed out, so that a grant answered late can be given back. */
  protected lateAnswer(_result: T): void {}

  private answered(result: T): void {
    this.end();
    this.health?.answered();
    if (this.timedOut) return this.lateAnswer(result);
    try {
      this.resolve(this.map(result));
    } catch (error) {
      this.reject(error);
    }
  }

  private failed(error: unknown): void {
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
    this.health?.failed(error, this.key, this.what);
    this.onFailure(error);
    this.reject(error);
  }
}

/** What the caller of a plain store call may do on its answer, failure or late answer. */
export interface CallHooks<T, R> {
  /** Turns the answer into the call's value (the answer itself when absent); a throw rejects. */
  readonly map?: (result: T) => R | PromiseLike<R>;
  readonly failed?: (error: LockError) => void;
  readonly late?: (result: T) => void;
}

/** A store call whose answer handling comes as hooks: for the calls off the hot path. */
class HookedCall<T, R> extends StoreCall<T, R> {
  constructor(
    deadlines: CallDeadlines,
    key: string | undefined,
    what: StoreOperation,
    private readonly hooks: CallHooks<T, R>,
    health?: StoreHealthMonitor,
  ) {
    super(deadlines, key, what, health);
  }

  protected override map(result: T): R | PromiseLike<R> {
    return this.hooks.map ? this.hooks.map(result) : (result as unknown as R);
  }

  protected override onFailure(error: LockError): void {
    this.hooks.failed?.(error);
  }

  protected override lateAnswer(result: T): void {
    this.hooks.late?.(result);
  }
}

const NO_HOOKS: CallHooks<unknown, unknown> = Object.freeze({});

/** `operation` as a bounded store call (see `StoreCall`), with its answer handled by `hooks`. */
export function callStore<T, R = T>(
  operation: Promise<T>,
  key: string | undefined,
  what: StoreOperation,
  deadlines: CallDeadlines,
  hooks = NO_HOOKS as CallHooks<T, R>,
  health?: StoreHealthMonitor,
): Promise<R> {
  const call = new HookedCall(deadlines, key, what, hooks, health);
  return call.start(operation);
}

function asStoreError(error: unknown, key: string | undefined, what: string): LockError {
  if (error instanceof LockError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new LockStoreError(key, `${what} failed in the store: ${reason}`, error);
}
