import { LockOptionsError } from '../../errors/lock.errors.js';
import type { LockKind } from '../../stores/lock-store.interface.js';
import type { LockOptions } from './lock-options.interface.js';

export const MUTEX: LockKind = Object.freeze({ type: 'mutex' });
const READ: LockKind = Object.freeze({ type: 'read' });
const WRITE: LockKind = Object.freeze({ type: 'write' });

/** The kind named by checked options (`limit`, `mode`). */
export function kindOf(options: LockOptions | undefined): LockKind {
  if (options?.limit !== undefined) return { type: 'semaphore', limit: options.limit };
  if (options?.mode === undefined) return MUTEX;
  return options.mode === 'read' ? READ : WRITE;
}

/** How many locks of this kind one process may hold on the key at once. */
export function holdersPerProcess(kind: LockKind): number {
  if (kind.type === 'semaphore') return kind.limit;
  return kind.type === 'read' ? Infinity : 1;
}

export function limitOf(kind: LockKind): number | undefined {
  return kind.type === 'semaphore' ? kind.limit : undefined;
}

/** For messages: "a mutex", "a semaphore of limit 3", "a read lock", "a write lock". */
export function describeKind(kind: LockKind): string {
  if (kind.type === 'semaphore') return `a semaphore of limit ${kind.limit}`;
  return kind.type === 'mutex' ? 'a mutex' : `a ${kind.type} lock`;
}

/** An acquire that found the key held as another kind of lock, or with another limit. */
export function kindConflict(label: string, kind: LockKind, heldAs: string): LockOptionsError {
  return new LockOptionsError(
    `Lock "${label}": asked as ${describeKind(kind)}, but it is held as ${heldAs}. ` +
      'Everyone locking one key must use the same kind of lock and the same limit.',
    label,
  );
}
