/** The values a queue passes around: grants, attempt outcomes, and the waiters it serves. */
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

/**
 * The table of the keys this process is busy with, as the queues and the locks that take
 * themselves out of it see it: its entries are queues, and attempts or locks without one. The
 * acquirer, which fills it, keeps it (`BusyKeys`).
 */
export interface KeyTable<V extends object = object> {
  readonly size: number;
  get(key: string): V | undefined;
  set(key: string, entry: V): void;
  /** Drops `key` if its entry is still `entry` (another may have taken its place). */
  deleteIf(key: string, entry: V): void;
  values(): V[];
}
