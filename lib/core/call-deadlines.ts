/** A store call being timed; `end()` it once it answered. */
export interface TimedCall {
  readonly due: number;
  readonly done: boolean;
  end(): void;
}

interface Entry extends TimedCall {
  done: boolean;
  readonly expire: () => void;
}

/**
 * The deadlines of store calls, all `ms` long, on one timer. Calls that start later end later,
 * so they wait in arrival order and one timer, armed for the oldest unanswered call, stands in
 * for a timer per call (two fewer timer operations on every acquire and release).
 */
export class CallDeadlines {
  private calls: Entry[] = [];
  private first = 0;
  private timer?: NodeJS.Timeout;

  constructor(readonly ms: number) {}

  /** Calls `expire` when `ms` pass before the caller marks the returned call `done`. */
  start(expire: () => void): TimedCall {
    const call: Entry = {
      due: performance.now() + this.ms,
      done: false,
      expire,
      end: () => {
        call.done = true;
        this.dropAnswered();
      },
    };
    this.calls.push(call);
    if (!this.timer) this.arm(call.due);
    return call;
  }

  /** Answers come back about in order: forget them from the front, so few calls are kept. */
  private dropAnswered(): void {
    const { calls } = this;
    while (this.first < calls.length && calls[this.first].done) this.first++;
    if (this.first === calls.length) {
      this.calls = [];
      this.first = 0;
    } else if (this.first > 64 && this.first * 2 > calls.length) {
      this.calls = calls.slice(this.first);
      this.first = 0;
    }
  }

  private sweep(): void {
    this.timer = undefined;
    const now = performance.now();
    // Re-read `calls` each turn: an `expire` that ends calls may replace the array.
    while (this.first < this.calls.length) {
      const call = this.calls[this.first];
      if (!call.done && call.due > now) break;
      this.first++;
      if (!call.done) call.expire();
    }
    this.dropAnswered();
    if (this.first < this.calls.length) this.arm(this.calls[this.first].due);
  }

  private arm(due: number): void {
    this.timer = setTimeout(() => this.sweep(), Math.max(0, due - performance.now()));
    // The socket keeps the process alive while a call is pending; this timer must not.
    this.timer.unref();
  }
}
