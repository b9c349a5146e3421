import type { ReleaseListener } from '../../stores/lock-store.interface.js';
import type { WaitQueue } from './wait-queue.js';
import type { BusyKeys } from '../lock-engine.js';

/** A won acquire attempt, waiting to be turned into a lock. */
export interface Grant {
  readonly token: string;
  readonly fences?: readonly number[];
  /** When the winning attempt was sent (`performance.now()`). */
  readonly startedAt: number;
  /** Local deadline of the lease: it cannot be over in the store before then. */
  readonly expiresAt: number;
}

/**
 * A won attempt's grant, or the busy holder's remaining lease. `late`: the attempt won, but its
 * answer came after the lease had ended, so the keys were given back; try again at once.
 */
export type AttemptOutcome =
  { readonly grant: Grant } | { readonly pttl: number; readonly late?: boolean };

export interface Waiter {
  readonly settled: boolean;
  /**
   * The lease in ms this waiter asks for when it takes over a lock held here (a local hand-off,
   * or a successor lease a release sets); none for a fenced lock, whose fence must be its own.
   */
  readonly takeOverTtl?: number;
  /** One attempt with this waiter's own options, for queue `queueId`; made only while it is the head. */
  attempt(queueId: string): Promise<AttemptOutcome>;
  deliver(grant: Grant): void;
  fail(error: unknown): void;
}

/** What a queue needs from the engine; one driver serves every queue. */
export interface QueueDriver {
  /** Subscribes to release notifications for every key of the queue. */
  subscribe(queue: WaitQueue, onRelease: ReleaseListener): Promise<() => void>;
  /** The queue stopped waiting: take it out of the store's turn list. */
  leaveTurns(queue: WaitQueue): void;
  /** Gives back a grant no waiter wants any more. */
  discard(queue: WaitQueue, grant: Grant): void;
  /** The keys this process is busy with: a queue with nothing left to do takes itself out. */
  readonly busyKeys: BusyKeys<object>;
  /**
   * Longest sleep of `queue` between attempts when no notification comes: `pollCap`, longer
   * while many queues wait at once (see `pollInterval`), except for a writer, whose mark holds
   * readers back only as long as it keeps trying.
   */
  pollCapOf(queue: WaitQueue): number;
  /** Counts the queues that wait (`1` when one starts, `-1` when it ends). */
  waiting(change: 1 | -1): void;
  /** Most hand-offs in a row that keep a lock inside this process (see `nextLocalHolder`). */
  readonly localHandoffs: number;
  /** How long the store keeps a key for a process whose turn it is, if it keeps turns. */
  readonly turnGrace?: number;
}
