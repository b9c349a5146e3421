import type { LockBusyError, LockLostError } from '../../errors/lock.errors.js';
import type { LockOptions } from '../../engine/request/lock-options.interface.js';

/** What a decorated method does when its lock stays busy for the whole `wait`. */
export type OnBusy =
  | 'throw'
  | 'skip'
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- receives the method's own arguments
  | ((error: LockBusyError, ...args: any[]) => unknown);

/** What a decorated method does when its lock was lost while it ran. */
export type OnLostCall =
  | 'throw'
  | 'ignore'
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- receives the method's own arguments
  | ((error: LockLostError, ...args: any[]) => unknown);

/** Options of `@DistributedLock()`: lock options plus what to do when the lock is busy or lost. */
export interface DistributedLockOptions extends LockOptions {
  /**
   * `'throw'`: throw `LockBusyError` (HTTP 409 by default). `'skip'`: do not run the method and
   * return `undefined` (for cron jobs that only one instance should run). A function: its
   * result is returned instead of the method's; it gets the error and the method's arguments.
   * `'skip'` also makes the default `wait` 0, so that an instance whose tick comes while another
   * runs the job skips it at once (an explicit `wait` still applies), and skips the run when the
   * store is unreachable: the module logs the outage once, where a scheduler would log each tick.
   * @default 'throw'
   */
  onBusy?: OnBusy;
  /**
   * `'throw'`: reject with `LockLostError` (HTTP 503) when the lock was lost while the method ran,
   * even if it returned (its result is on `error.result`, its error on `error.cause`); an
   * Observable result errors with it as soon as the lock is lost. `'ignore'`: keep the method's
   * outcome. A function: its result is returned instead; it gets the error and the arguments.
   * @default 'throw'
   */
  onLost?: OnLostCall;
}
