/** What every lock under test offers the scenarios: take a key, hand back something to release. */
export interface HeldLock {
  release(): Promise<void>;
}

export interface AcquireOptions {
  /** Lease, ms. */
  readonly ttl: number;
  /** Longest wait for a busy key, ms (redlock ignores it: its retry settings decide). */
  readonly wait: number;
  /** Aborted when a timed cell ends, so waiters stop. */
  readonly signal?: AbortSignal;
}

export interface Contender {
  readonly name: string;
  /** One line on the settings used, for the report. */
  readonly settings: string;
  /** `undefined` when the key stayed busy for the whole wait or the signal aborted. */
  acquire(key: string, options: AcquireOptions): Promise<HeldLock | undefined>;
  close(): Promise<void>;
}

/**
 * `defaults`: each library's default settings (uncontended, flash sale).
 * `hot-key`: retry settings under which a poller eventually gets a contended key.
 */
export type Tuning = 'defaults' | 'hot-key';

export const LOCK_CONTENDERS = ['library', 'redlock', 'redis-semaphore', 'raw'] as const;
export type LockContenderName = (typeof LOCK_CONTENDERS)[number];
