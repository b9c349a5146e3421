/**
 * A wake-up that cannot be missed: a `notify()` that arrives while nobody waits is kept, and
 * the next `wait()` returns at once.
 */
export class WakeLatch {
  private pending = false;
  private wake?: () => void;

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
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
