import type { LockLostError } from '../../errors/lock.errors.js';

/**
 * What a call that held a lock does when the lock was lost while its code ran: `'throw'` the
 * `LockLostError` (the code's own result or error rides on it), `'ignore'` the loss and keep
 * the code's outcome, or a function whose result is returned instead.
 */
export type OnLost<T = unknown> = 'throw' | 'ignore' | ((error: LockLostError) => T);

/** Options for one lock acquisition. Module-wide defaults come from `LockModuleOptions.defaults`. */
export interface LockOptions {
  /**
   * Lease length in milliseconds: how long the key lives in Redis if it is neither renewed nor
   * released. An integer from 1 to 2^31−1.
   * @default 30000
   */
  ttl?: number;
  /**
   * How long, in milliseconds, an acquire may wait for a busy lock before it throws
   * `LockBusyError`. `0` tries once; `Infinity` waits until the lock is free or `signal` aborts.
   * @default 10000
   */
  wait?: number;
  /**
   * Renew the lease every `ttl / 3` while the lock is held, so long work keeps it.
   * @default true
   */
  autoRenew?: boolean;
  /**
   * Upper bound, in milliseconds, on how long renewal may keep the lock. After that the lease
   * is left to run out and the lock's `signal` aborts with `LockLostError` (reason `max-hold`),
   * so a hung holder cannot keep the lock for ever.
   * @default undefined (no bound)
   */
  maxHold?: number;
  /**
   * Keeps the lock at least this many ms after it was taken, even when the holder is done
   * sooner: release then shortens the lease to what is left of `minHold` instead of deleting
   * the key. For jobs that should run once per tick across instances whose clocks or timers
   * differ a little (ShedLock's `lockAtLeastFor`); pair it with `onBusy: 'skip'`.
   * @default undefined (release frees the lock at once)
   */
  minHold?: number;
  /**
   * Also issue a fencing token: a number that strictly increases with each acquisition of the
   * key, available as `lock.fence`. Compare it at the resource to reject stale writers.
   * @default false
   */
  fencing?: boolean;
  /**
   * Makes the lock a semaphore: up to `limit` holders at once, across every process, each with
   * its own token, lease, renewal and `signal`. Everyone locking one key must give the same
   * `limit`; an acquire that disagrees with the current holders throws `LockOptionsError`.
   * Takes a single key. An integer from 1 to 1000000.
   * @default undefined (a mutex: one holder)
   */
  limit?: number;
  /**
   * Makes the lock one side of a read-write lock: `'read'` holders share the key, a `'write'`
   * holder excludes everyone. Writers are preferred: once a writer waits, new readers wait
   * behind it. Taking `'write'` while the same call chain holds `'read'` on the key throws
   * `LockOptionsError` (it would wait for itself). Takes a single key; readers get no fence.
   * @default undefined (a mutex: one holder)
   */
  mode?: 'read' | 'write';
  /**
   * Cancels a pending acquire. The acquire rejects with the signal's reason and leaves nothing
   * behind in the store. It has no effect once the lock is held.
   * @default undefined
   */
  signal?: AbortSignal;
}

/** Options of `withLock`: lock options plus what to do when the lock is lost while `fn` runs. */
export interface WithLockOptions<T = unknown> extends LockOptions {
  /**
   * `'throw'`: reject with `LockLostError` (HTTP 503) when the lock was lost while `fn` ran, even
   * if `fn` returned; its result is on `error.result`, its error on `error.cause`. `'ignore'`:
   * settle as `fn` did. A function: its result is returned instead; it gets the error.
   * @default 'throw'
   */
  onLost?: OnLost<T>;
}

/** The options with every default applied. */
export type ResolvedLockOptions = Required<
  Omit<LockOptions, 'maxHold' | 'minHold' | 'signal' | 'limit' | 'mode'>
> &
  Pick<LockOptions, 'maxHold' | 'minHold' | 'signal'>;
