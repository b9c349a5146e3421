import type { LockOptions, ResolvedLockOptions } from '../interfaces/lock-options.interface.js';
import { validateLockKeys } from './lock-key.validation.js';
import { LockOptionsError } from '../errors/lock.errors.js';
import { lockOptionsProblem, resolveLockOptions } from './lock-options.validation.js';
import type { Grant } from './wait-queue.interface.js';

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
  const label = names.length === 1 ? names[0] : names.join(' + ');
  const problem = lockOptionsProblem(options);
  if (problem) throw new LockOptionsError(`Lock "${label}": ${problem}`);
  return {
    names,
    label,
    fullKeys: names.length === 1 ? [prefix + label] : names.map((name) => prefix + name),
    options: resolveLockOptions(defaults, options),
    startedAt: performance.now(),
  };
}

/**
 * A lease won by another holder suits a waiter that needs no fence of its own (a fence must be
 * new for each holder) and lets the watchdog renew it, when what is left of it lies within the
 * waiter's own ttl and `maxHold`: enough for the next renewal to land in time, and no longer
 * than the waiter would leave the key behind if this process died or its `maxHold` ran out.
 */
export function canInherit(request: LockRequest, grant: Grant): boolean {
  const { fencing, autoRenew, ttl } = request.options;
  const left = grant.expiresAt - performance.now();
  return !fencing && autoRenew && left > ttl / 2 && left <= leaseTtlOf(request);
}

/** The lease asked of the store: never longer than `maxHold`. */
export function leaseTtlOf({ options }: LockRequest): number {
  return Math.min(options.ttl, options.maxHold ?? options.ttl);
}
