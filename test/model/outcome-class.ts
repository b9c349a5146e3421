/** Sorts how a call ended into the classes the checker judges (see model-checks.ts). */
import {
  LockBusyError,
  LockLostError,
  LockOptionsError,
  LockShutdownError,
  LockStoreError,
} from '../../lib/errors/lock.errors.js';
import type { Result } from './model-records.js';

/** `tryAcquire` resolving `undefined`: busy, as a `LockBusyError` would be. */
export const BUSY = Symbol('busy');

export function classify(error: unknown): { result: Result; message: string } {
  if (error === undefined) return { result: 'ok', message: '' };
  if (error === BUSY) return { result: 'busy', message: 'tryAcquire: undefined' };
  const message = error instanceof Error ? error.message : String(error);
  // Shutdown first: it is a LockStoreError too, and only the run's teardown causes it.
  if (error instanceof LockShutdownError) return { result: 'shutdown', message };
  if (error instanceof LockBusyError) return { result: 'busy', message };
  if (error instanceof LockLostError) return { result: 'lost', message };
  if (error instanceof LockOptionsError) return { result: 'options', message };
  if (error instanceof LockStoreError) return { result: 'store', message };
  if (message === 'model abort') return { result: 'aborted', message };
  return {
    result: 'other',
    message: error instanceof Error ? `${error.name}: ${message}` : message,
  };
}
