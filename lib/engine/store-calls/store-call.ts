import { LockError, LockStoreError } from '../../errors/lock.errors.js';
import { afterPendingIo } from '../../stores/after-pending-io.js';
import type { StoreOperation } from '../lock.events.js';
import type { StoreHealthMonitor } from './store-health-monitor.js';
import { inLibraryScope } from '../../stores/library-scope.js';
import { asStoreError } from '../../stores/store-refusals.js';

/**
 * A call being timed by `CallDeadlines`. The call object is its own entry in the list (no
 * closures per call: this is on the path of every acquire and release).
 */
export abstract class TimedCall {
  /** When the call expires (`performance.now()` ms); set by `CallDeadlines.track`. */
  due = 0;
  /** The call answered: it must not expire any more. */
  done = false;

  constructor(protected readonly deadlines: CallDeadlines) {}

  /** The call answered before its deadline. */
  end(): void {
    this.done = true;
    this.deadlines.dropAnswered();
  }

  /** The deadline passed before `end()`. */
  abstract expire(): void;
}

/**
 * The deadlines of store calls, all `ms` long, on one timer. Calls that start later end later,
 * so they wait in arrival order and one timer, armed for the oldest unanswered call, stands in
 * for a timer per call (two fewer timer operations on every acquire and release).
 */
export class CallDeadlines {
  /**
   * Calls in the order sent, from `first` to `end`. Slots are reused rather than the array
   * replaced when it empties, which with one lock at a time is after every call; only an array
   * grown large by a burst is let go then.
   */
  private calls: (TimedCall | undefined)[] = [];
  private first = 0;
  private end = 0;
  private timer?: NodeJS.Timeout;
  private idle?: () => void;

  constructor(readonly ms: number) {}

  /**
   * Resolves once no call is pending: each has answered or expired. Shutdown waits for this
   * before closing the store, or a release's NOSCRIPT retry would follow the connection's QUIT.
   */
  settled(): Promise<void> {
    if (this.first === this.end) return Promise.resolve();
    return new Promise((resolve) => {
      const before = this.idle;
      this.idle = () => {
        this.idle = undefined;
        before?.();
        resolve();
      };
    });
  }

  /** Starts timing `call`, sent at `now`: it expires unless it `end()`s within `ms`. */
  track(call: TimedCall, now = performance.now()): void {
    call.due = now + this.ms;
    this.calls[this.end++] = call;
    if (!this.timer) this.arm(call.due);
  }

  /** Answers come back about in order: forget them from the front, so few calls are kept. */
  dropAnswered(): void {
    const { calls } = this;
    while (this.first < this.end && calls[this.first]!.done) calls[this.first++] = undefined;
    if (this.first === this.end) {
      this.first = this.end = 0;
      this.idle?.();
      if (calls.length > 1024) this.calls = [];
    } else if (this.first > 64 && this.first * 2 > this.end) {
      // Many calls in flight for long: move the live ones to the front.
      calls.copyWithin(0, this.first, this.end);
      calls.fill(undefined, this.end - this.first, this.end);
      this.end -= this.first;
      this.first = 0;
    }
  }

  private sweep(): void {
    this.timer = undefined;
    const now = performance.now();
    // An `expire` may end calls, which moves the others: read the fields each turn.
    while (this.first < this.end) {
      const call = this.calls[this.first]!;
      if (!call.done && call.due > now) break;
      this.calls[this.first++] = undefined;
      if (!call.done) call.expire();
    }
    this.dropAnswered();
    if (this.first < this.end) this.arm(this.calls[this.first]!.due);
  }

  private arm(due: number): void {
    const delay = Math.max(0, due - performance.now());
    // The socket keeps the process alive while a call is pending; this timer must not.
    this.timer = inLibraryScope(() => setTimeout(() => this.sweep(), delay).unref());
  }
}

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
    // Only an answer that ends an outage is news to the monitor: the common case reads a field.
    if (this.health?.downSince !== undefined) this.health.answered();
    if (this.timedOut) return this.lateAnswer(result);
    try {
      this.resolve(this.map(result));
    } catch (error) {
      this.reject(error);
    }
  }

  private failed(error: unknown): void {
    this.end();
    const prefix = this.health?.keyPrefix ?? '';
    if (!this.timedOut) this.fail(asStoreError(error, this.key, this.what, prefix));
  }

  expire(): void {
    afterPendingIo(() => {
      if (this.done) return;
      this.timedOut = true;
      const { key, what, deadlines } = this;
      const message = `${what} got no answer from the store within ${deadlines.ms} ms.`;
      this.fail(new LockStoreError(key, `${message} Check the Redis connection.`));
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
