/**
 * When the store calls a queue is blocked on were sent: the head's call, and the oldest attempt
 * made outside the queue. A waiter whose wait runs out while the store has left a call
 * unanswered for long was kept waiting by the store, not by a holder (see `waitRanOut` in
 * waiter.ts).
 */
export class PendingCalls {
  /** Attempts made outside the queue (the uncontended fast path) still in flight. */
  outside = 0;
  private headSince?: number;
  private outsideSince?: number;

  beginOutside(sentAt: number): void {
    if (this.outside++ === 0) this.outsideSince = sentAt;
  }

  endOutside(): void {
    if (--this.outside === 0) this.outsideSince = undefined;
  }

  /** Runs the head's store call, timed. */
  async timing<T>(call: () => Promise<T>): Promise<T> {
    this.headSince = performance.now();
    try {
      return await call();
    } finally {
      this.headSince = undefined;
    }
  }

  /** When the oldest call in flight was sent, if one is. */
  since(): number | undefined {
    const calls = [this.headSince, this.outsideSince].filter((at) => at !== undefined);
    return calls.length > 0 ? Math.min(...calls) : undefined;
  }
}
