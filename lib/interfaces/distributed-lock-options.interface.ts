import type { LockBusyError } from '../errors/lock.errors.js';
import type { LockOptions } from './lock-options.interface.js';

/** What a decorated method does when its lock stays busy for the whole `wait`. */
export type OnBusy =
  | 'throw'
  | 'skip'
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- receives the method's own arguments
  | ((error: LockBusyError, ...args: any[]) => unknown);

/** Options of `@DistributedLock()`: lock options plus what to do when the lock is busy. */
export interface DistributedLockOptions extends LockOptions {
  /**
   * `'throw'`: throw `LockBusyError` (HTTP 409 by default). `'skip'`: do not run the method and
   * return `undefined` (for cron jobs that only one instance should run). A function: its
   * result is returned instead of the method's; it gets the error and the method's arguments.
   * @default 'throw'
   */
  onBusy?: OnBusy;
}
