import { inLibraryScope } from '../../stores/library-scope.js';

/**
 * A wake-up that cannot be missed: a `notify()` that arrives while nobody waits is kept, and
 * the next `wait()` returns at once.
 */
export class WakeLatch {
  private pending = false;
  private wake?: () => void;
  private timer?: NodeJS.Timeout;
  private wakeAt = Infinity;

  notify(): void {
    if (this.wake) this.wake();
    else this.pending = true;
  }

  clear(): void {
    this.pending = false;
  }

  /** Resolves on the next notification, or after `ms` at the latest. */
  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(this.timer);
        this.timer = undefined;
        this.wakeAt = Infinity;
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
      this.sleepUntil(performance.now() + ms);
    });
  }

  /** Cuts a wait in progress short: it ends within `ms` at the latest. */
  wakeWithin(ms: number): void {
    if (this.wake && performance.now() + ms < this.wakeAt) this.sleepUntil(performance.now() + ms);
  }

  private sleepUntil(at: number): void {
    clearTimeout(this.timer);
    this.wakeAt = at;
    const delay = Math.max(0, at - performance.now());
    this.timer = inLibraryScope(() => setTimeout(() => this.wake?.(), delay));
  }
}
