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

/**
 * The code of the error that refuses a new lease past the process's renewal capacity. Matched
 * by code, not class: the checker runs on library versions with and without it.
 */
const OVERLOADED = 'LOCK_OVERLOADED';

/** What the checker reads off an error besides its class: code, refused grant, loss reason. */
export interface ErrorDetails {
  readonly code?: string;
  readonly refused?: string;
  readonly reason?: string;
}

export function classify(error: unknown): { result: Result; message: string } & ErrorDetails {
  if (error === undefined) return { result: 'ok', message: '' };
  if (error === BUSY) return { result: 'busy', message: 'tryAcquire: undefined' };
  const message = error instanceof Error ? error.message : String(error);
  const details = detailsOf(error);
  const as = (result: Result) => ({ result, message, ...details });
  // Shutdown first: it is a LockStoreError too, and only the run's teardown causes it.
  if (error instanceof LockShutdownError) return as('shutdown');
  if (details.code === OVERLOADED) return as('overloaded');
  if (error instanceof LockBusyError) return as('busy');
  if (error instanceof LockLostError) return as('lost');
  if (error instanceof LockOptionsError) return as('options');
  if (error instanceof LockStoreError) return as('store');
  if (message === 'model abort') return as('aborted');
  return {
    result: 'other',
    message: error instanceof Error ? `${error.name}: ${message}` : message,
    ...details,
  };
}

/** The fields of a library error the invariants read; a foreign error has none. */
export function detailsOf(error: unknown): ErrorDetails {
  if (typeof error !== 'object' || error === null) return {};
  const { code, refused, reason } = error as Record<string, unknown>;
  const text = (value: unknown): string | undefined =>
    typeof value === 'string' ? value : undefined;
  return { code: text(code), refused: text(refused), reason: text(reason) };
}

/** Where an error was made, briefly: the first frames of its stack, for a report to point at. */
export function stackOf(error: unknown): string {
  const stack = error instanceof Error ? error.stack : undefined;
  const frames = stack?.split('\n').filter((line) => line.trim().startsWith('at ')) ?? [];
  return frames.length > 0
    ? ` (${frames
        .slice(0, 4)
        .map((f) => f.trim())
        .join(' < ')})`
    : '';
}
