import type { LockOptions, ResolvedLockOptions } from '../interfaces/lock-options.interface.js';
import { validateLockKeys } from './lock-key.validation.js';
import { resolveLockOptions, validateLockOptions } from './lock-options.validation.js';

/** A validated acquire request: everything is checked before any store call. */
export interface LockRequest {
  /** The caller's key names, in their order, without duplicates. */
  readonly names: readonly string[];
  /** The names joined, for messages and events. */
  readonly label: string;
  /** Store keys: prefix + name. */
  readonly fullKeys: readonly string[];
  readonly options: ResolvedLockOptions;
  /** `performance.now()` when the acquire was called. */
  readonly startedAt: number;
}

export function prepareLockRequest(
  key: unknown,
  options: LockOptions | undefined,
  prefix: string,
  defaults: ResolvedLockOptions,
): LockRequest {
  const names = validateLockKeys(key);
  validateLockOptions(options, `Lock "${names.join(' + ')}"`);
  return {
    names,
    label: names.join(' + '),
    fullKeys: names.map((name) => prefix + name),
    options: resolveLockOptions(defaults, options),
    startedAt: performance.now(),
  };
}
