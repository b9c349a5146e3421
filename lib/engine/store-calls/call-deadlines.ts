import { inLibraryScope } from '../../stores/library-scope.js';

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
