import { LockOptionsError } from '../../errors/lock.errors.js';
import type { LockOptions, ResolvedLockOptions } from './lock-options.interface.js';

/*
 * The checks of lock options, and their defaults: a bad option is a `LockOptionsError` before any
 * store call.
 */

export const MAX_TTL = 2 ** 31 - 1;

export const DEFAULT_LOCK_OPTIONS: ResolvedLockOptions = Object.freeze({
  ttl: 30_000,
  wait: 10_000,
  autoRenew: true,
  fencing: false,
});

const knownOptions = [
  'ttl',
  'wait',
  'autoRenew',
  'maxHold',
  'minHold',
  'fencing',
  'limit',
  'mode',
  'signal',
];
/** The largest semaphore `limit`: far above any sane one, low enough to catch a unit mix-up. */
export const MAX_LIMIT = 1_000_000;
const noExtraNames: ReadonlySet<string> = new Set();

/**
 * Checks options given from TypeScript or plain JavaScript. Unknown names are rejected: a typo
 * such as `tll` would otherwise silently fall back to the default.
 */
export function validateLockOptions(
  options: unknown,
  where: string,
  extraNames: ReadonlySet<string> = noExtraNames,
): asserts options is LockOptions {
  const problem = lockOptionsProblem(options, extraNames);
  if (problem) throw new LockOptionsError(`${where}: ${problem}`);
}

/**
 * What is wrong with `options`, if anything, for `validateLockOptions`. Every acquire asks, so
 * the message (and where it happened) is only put together when something is wrong.
 */
export function lockOptionsProblem(
  options: unknown,
  extraNames: ReadonlySet<string> = noExtraNames,
): string | undefined {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    return `lock options must be an object, got ${describe(options)}.`;
  }
  if (typeof (options as { then?: unknown }).then === 'function') {
    return 'lock options must be an object, got a Promise: await it first.';
  }
  if (!isPlainObject(options)) {
    return `lock options must be a plain object, got ${describe(options)}.`;
  }
  const record = options as Record<string, unknown>;
  for (const name in record) {
    // Own-ness is asked of unknown names only: known ones are checked by value below.
    if (!isLockOption(name) && Object.hasOwn(record, name) && !extraNames.has(name)) {
      const known = [...knownOptions, ...extraNames].join(', ');
      return `unknown lock option "${name}". Known options: ${known}.`;
    }
  }
  const { ttl, wait, maxHold, minHold, autoRenew, fencing, limit, mode, signal } = record;
  if (ttl !== undefined && (!isPositiveInteger(ttl) || ttl > MAX_TTL)) {
    return `"ttl" must be an integer number of ms from 1 to ${MAX_TTL}, got ${describe(ttl)}.`;
  }
  if (wait !== undefined && (typeof wait !== 'number' || Number.isNaN(wait) || wait < 0)) {
    return `"wait" must be a number of ms ≥ 0 (or Infinity), got ${describe(wait)}.`;
  }
  if (maxHold !== undefined && !isPositiveInteger(maxHold)) {
    return `"maxHold" must be a positive integer number of ms, got ${describe(maxHold)}.`;
  }
  if (minHold !== undefined && (!isPositiveInteger(minHold) || minHold > MAX_TTL)) {
    return `"minHold" must be an integer number of ms from 1 to ${MAX_TTL}, got ${describe(minHold)}.`;
  }
  if (isPositiveInteger(minHold) && isPositiveInteger(maxHold) && minHold > maxHold) {
    return `"minHold" (${minHold} ms) must not be longer than "maxHold" (${maxHold} ms).`;
  }
  if (autoRenew !== undefined && typeof autoRenew !== 'boolean') {
    return `"autoRenew" must be a boolean, got ${describe(autoRenew)}.`;
  }
  if (fencing !== undefined && typeof fencing !== 'boolean') {
    return `"fencing" must be a boolean, got ${describe(fencing)}.`;
  }
  if (limit !== undefined && (!isPositiveInteger(limit) || limit > MAX_LIMIT)) {
    return `"limit" must be an integer from 1 to ${MAX_LIMIT}, got ${describe(limit)}.`;
  }
  if (mode !== undefined && mode !== 'read' && mode !== 'write') {
    return `"mode" must be 'read' or 'write', got ${describe(mode)}.`;
  }
  if (limit !== undefined && mode !== undefined) {
    return '"limit" (a semaphore) and "mode" (a read-write lock) cannot be combined.';
  }
  if (mode === 'read' && fencing === true) {
    return "readers get no fence (\"fencing\" with mode 'read'): fence the writes, in mode 'write'.";
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    return `"signal" must be an AbortSignal, got ${describe(signal)}.`;
  }
}

/** A switch, not a set lookup: this runs for every option of every acquire. */
function isLockOption(name: string): boolean {
  switch (name) {
    case 'ttl':
    case 'wait':
    case 'autoRenew':
    case 'maxHold':
    case 'minHold':
    case 'fencing':
    case 'limit':
    case 'mode':
    case 'signal':
      return true;
    default:
      return false;
  }
}

/**
 * An object literal (or a class instance) rather than a Map, Date, array or other built-in,
 * whose settings would otherwise be read as none at all.
 */
export function isPlainObject(value: unknown): value is object {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.prototype.toString.call(value) === '[object Object]'
  );
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0;
}

export function describe(value: unknown): string {
  if (typeof value === 'string')
    return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null)
    return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (Array.isArray(value)) return 'an array';
  const tag = typeof value === 'object' ? Object.prototype.toString.call(value).slice(8, -1) : '';
  if (tag !== '' && tag !== 'Object') return /^[AEIOU]/.test(tag) ? `an ${tag}` : `a ${tag}`;
  return /^[aeiou]/.test(typeof value) ? `an ${typeof value}` : `a ${typeof value}`;
}

/** Checks `onLost` (of `withLock` or `@DistributedLock`) where it is given. */
export function checkOnLost(onLost: unknown, where: string): void {
  if (onLost !== 'throw' && onLost !== 'ignore' && typeof onLost !== 'function') {
    throw new LockOptionsError(`${where}: "onLost" must be 'throw', 'ignore' or a function.`);
  }
}
