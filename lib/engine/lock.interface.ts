import type { LockKind, ReleaseResult } from '../stores/lock-store.interface.js';

/** A held lock. Release it with `release()`, or let `await using` do it. */
export interface Lock extends AsyncDisposable {
  /** The key as you named it (keys joined with `+` for a multi-key lock). */
  readonly key: string;
  /** Every key of the lock, in the order given (duplicates dropped). */
  readonly keys: readonly string[];
  /** Who may hold the key with this lock: a mutex, a semaphore of `limit`, or a read or write side. */
  readonly kind: LockKind;
  /** The owner token stored as the key's value in Redis (a member of the holders' set for the other kinds). */
  readonly token: string;
  /** The fencing token, when acquired with `fencing: true` (the first key's, for a multi-key lock). */
  readonly fence?: number;
  /** One fencing token per key of `keys`, when acquired with `fencing: true`. */
  readonly fences?: readonly number[];
  /** Aborts, with a `LockLostError` as reason, when the lock stops being ours before release. */
  readonly signal: AbortSignal;
  /** True until the lock is released or lost, or its lease (the one last sent to the store) is over. */
  readonly isHeld: boolean;
  /** Milliseconds left on the lease, by this process's monotonic clock (0 once not held). */
  remainingTime(): number;
  /**
   * Sets the lease to `ttl` ms from now (default: the lock's ttl), never past `maxHold`. A
   * shorter `ttl` shortens the lease, and `isHeld` and `remainingTime()` follow it. With
   * `autoRenew`, the watchdog's next renewal, a third of the lock's ttl later, sets the lease back
   * to the lock's ttl; a lease shorter than that third runs out first. Throws `LockLostError` if
   * the lock is no longer ours.
   */
  extend(ttl?: number): Promise<void>;
  /**
   * Releases the lock. Idempotent. Reports `'expired'` if the lease had already run out and
   * `'stolen'` if another owner holds the key now (their key is left alone).
   */
  release(): Promise<ReleaseResult>;
}
