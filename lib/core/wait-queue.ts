import { WakeLatch } from './wake-latch.js';

/** A won acquire attempt, waiting to be turned into a lock. */
export interface Grant {
  readonly token: string;
  readonly fences?: readonly number[];
  /** When the winning attempt was sent (`performance.now()`). */
  readonly startedAt: number;
  /** Local deadline of the lease: surely over in the store by then. */
  readonly expiresAt: number;
}

export type AttemptOutcome = { readonly grant: Grant } | { readonly pttl: number };

export interface Waiter {
  readonly settled: boolean;
  /** One attempt with this waiter's own options; made only while it is the head. */
  attempt(): Promise<AttemptOutcome>;
  deliver(grant: Grant): void;
  fail(error: unknown): void;
}

/** What a queue needs from the engine. */
export interface QueueDriver {
  /** Subscribes to release notifications for every key of the queue. */
  subscribe(onRelease: () => void): Promise<() => void>;
  /** Gives back a grant no waiter wants any more. */
  discard(grant: Grant): void;
  /** The queue has no waiter, no holder and nothing in flight. */
  idle(): void;
  /** Longest sleep between attempts when no notification comes. */
  readonly pollCap: number;
}

/**
 * The waiters of one process for one lock, first in, first out. Only the head talks to the
 * store; the others wait their turn in memory, so a hot key costs the store one attempt per
 * process and not one per request.
 */
export class WaitQueue {
  private readonly waiters: Waiter[] = [];
  private readonly latch = new WakeLatch();
  /** Locks on this queue's keys held by this process. */
  private holders = 0;
  /** Attempts made outside the queue (the uncontended fast path) still in flight. */
  private outside = 0;
  private running = false;
  private unsubscribe?: () => void;
  /** Other processes were waiting at the last release here. */
  private contested = false;
  /** When the store call now in flight for the head was sent. */
  private headCallSince?: number;
  /** When the oldest attempt in flight outside the queue was sent. */
  private outsideSince?: number;

  constructor(private readonly driver: QueueDriver) {}

  /** True when an attempt may skip the queue: nobody here holds, waits or tries. */
  get free(): boolean {
    return this.holders === 0 && this.outside === 0 && this.waiters.length === 0;
  }

  get heldHere(): boolean {
    return this.holders > 0;
  }

  beginOutsideAttempt(): void {
    if (this.outside++ === 0) this.outsideSince = performance.now();
  }

  endOutsideAttempt(acquired: boolean): void {
    if (--this.outside === 0) this.outsideSince = undefined;
    if (acquired) this.holders++;
    this.latch.notify();
    this.settleIfIdle();
  }

  /** Queues a waiter; `first` puts it ahead of those that arrived while it was trying. */
  enqueue(waiter: Waiter, first = false): void {
    if (first) this.waiters.unshift(waiter);
    else this.waiters.push(waiter);
    if (!this.running) void this.run();
  }

  /** Takes out a waiter that gave up (deadline or abort). */
  withdraw(waiter: Waiter): void {
    const index = this.waiters.indexOf(waiter);
    if (index >= 0) this.waiters.splice(index, 1);
    this.latch.notify();
  }

  /**
   * A lock of this queue held here was released or lost. After a release, the next waiter here
   * normally tries at once (its attempt rides right behind the release). When other processes
   * were waiting last time, it waits for the release notification like they do instead, so the
   * lock does not stay inside this process for as long as it has waiters.
   */
  holderLeft(released: boolean): void {
    this.holders--;
    if (!(released && this.contested && this.unsubscribe)) this.latch.notify();
    this.settleIfIdle();
  }

  /** What the store said about waiters elsewhere when a lock of this queue was released. */
  noteRelease(waitersElsewhere: boolean): void {
    this.contested = waitersElsewhere;
  }

  /** Fails every waiter (shutdown). */
  failAll(error: unknown): void {
    for (const waiter of this.waiters.splice(0)) waiter.fail(error);
    this.latch.notify();
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.waiters.length > 0) {
        if (this.holders > 0 || this.outside > 0) {
          await this.latch.wait(this.driver.pollCap);
          continue;
        }
        this.latch.clear();
        const head = this.waiters[0];
        const outcome = await this.attempt(head);
        if (!outcome) continue;
        if ('grant' in outcome) this.hand(head, outcome.grant);
        else await this.latch.wait(fallbackDelay(outcome.pttl, this.driver.pollCap));
      }
    } finally {
      this.running = false;
      this.unsubscribe?.();
      this.unsubscribe = undefined;
      this.settleIfIdle();
    }
  }

  /**
   * When the store call this queue is blocked on was sent, if one is in flight. A waiter whose
   * wait runs out while the store has not answered for that long was kept waiting by the store,
   * not by a holder.
   */
  silentSince(): number | undefined {
    const calls = [this.headCallSince, this.outsideSince].filter((at) => at !== undefined);
    return calls.length > 0 ? Math.min(...calls) : undefined;
  }

  /** Subscribes first (so no release between attempt and sleep is missed), then tries. */
  private async attempt(head: Waiter): Promise<AttemptOutcome | undefined> {
    this.headCallSince = performance.now();
    try {
      this.unsubscribe ??= await this.driver.subscribe(() => this.latch.notify());
      return await head.attempt();
    } catch (error) {
      // The store is failing for everyone here, not just the head: fail them all now rather
      // than making each wait for its own timeout in turn.
      this.failAll(error);
      return undefined;
    } finally {
      this.headCallSince = undefined;
    }
  }

  /** The grant was won with the head's options (ttl, fencing), so only the head may take it. */
  private hand(head: Waiter, grant: Grant): void {
    if (this.waiters[0] !== head) return this.driver.discard(grant);
    this.waiters.shift();
    this.holders++;
    head.deliver(grant);
  }

  private settleIfIdle(): void {
    if (!this.running && this.free) this.driver.idle();
  }
}

/** Sleep until the holder's lease ends, capped, with jitter so waiters across processes spread out. */
export function fallbackDelay(pttl: number, cap: number): number {
  const base = pttl < 0 ? cap : Math.min(pttl, cap);
  return base + Math.random() * Math.min(50, 1 + base / 10);
}
