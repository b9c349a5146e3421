import { AsyncLocalStorage } from 'node:async_hooks';
import type { Lock } from '../lock.interface.js';
import { LockLostError } from '../../errors/lock.errors.js';
import type { ReleaseResult } from '../../stores/lock-store.interface.js';

interface HeldFrame {
  readonly owner: object;
  readonly lock: Lock;
  readonly fullKeys: readonly string[];
  readonly parent: HeldFrame | undefined;
}

const storage = new AsyncLocalStorage<HeldFrame>();

/** Runs `fn` in a context that records `lock` as held, for reentrancy and `currentLock()`. */
export function runHoldingLock<T>(
  owner: object,
  lock: Lock,
  fullKeys: readonly string[],
  fn: () => T,
): T {
  return storage.run({ owner, lock, fullKeys, parent: storage.getStore() }, fn);
}

/**
 * The innermost lock of `owner` held by the current async context that covers every one of
 * `fullKeys`, if any. Locks from another owner (another app) never match.
 */
export function findHeldLock(owner: object, fullKeys: readonly string[]): Lock | undefined {
  for (let frame = storage.getStore(); frame; frame = frame.parent) {
    if (frame.owner !== owner || !frame.lock.isHeld) continue;
    if (fullKeys.every((key) => frame.fullKeys.includes(key))) return frame.lock;
  }
  return undefined;
}

/** True when the current call chain holds some lock (of any owner): most acquires run outside. */
export function insideHeldLock(): boolean {
  return storage.getStore() !== undefined;
}

/** The innermost lock held by the current call chain (set by `withLock` and `@DistributedLock`). */
export function currentLock(): Lock | undefined {
  return storage.getStore()?.lock;
}

/** How many of `fullKeys` locks of `owner` held by the current async context cover. */
export function countHeldKeys(owner: object, fullKeys: readonly string[]): number {
  let frame = storage.getStore();
  const held = new Set<string>();
  for (; frame; frame = frame.parent) {
    if (frame.owner === owner && frame.lock.isHeld) frame.fullKeys.forEach((key) => held.add(key));
  }
  return fullKeys.filter((key) => held.has(key)).length;
}

/**
 * What a call that held a lock does when the lock was lost while its code ran: `'throw'` the
 * `LockLostError` (the code's own result or error rides on it), `'ignore'` the loss and keep
 * the code's outcome, or a function whose result is returned instead.
 */
export type OnLost<T = unknown> = 'throw' | 'ignore' | ((error: LockLostError) => T);

interface LossAware {
  lossError(): LockLostError | undefined;
}

/**
 * The loss `lock` suffered while held: its watchdog saw it lost, or its release found the key
 * expired or someone else's (a loss the watchdog had not yet seen).
 */
export function lossOf(lock: Lock, released: ReleaseResult | undefined): LockLostError | undefined {
  const seen = (lock as Partial<LossAware>).lossError?.();
  if (seen) return seen;
  if (released === 'expired' || released === 'stolen') return new LockLostError(lock.key, released);
  return undefined;
}

/**
 * Runs `fn` while `lock` is held, releases the lock, and settles with `fn`'s outcome unless the
 * lock was lost meanwhile: then as `onLost` says.
 */
export async function holdWhile<T>(
  lock: Lock,
  fn: () => T | Promise<T>,
  onLost: OnLost<T>,
): Promise<T> {
  let outcome: { readonly result?: T; readonly cause?: unknown };
  try {
    outcome = { result: await fn() };
  } catch (error) {
    outcome = { cause: error };
  }
  // The work is done; a release the store cannot confirm still ends when the lease does.
  const released = await lock.release().catch(() => undefined);
  const lost = onLost === 'ignore' ? undefined : lossOf(lock, released);
  if (lost && onLost !== 'ignore') {
    const error = new LockLostError(lock.key, lost.reason, outcome);
    if (onLost === 'throw') throw error;
    return onLost(error);
  }
  if ('cause' in outcome) throw outcome.cause;
  return outcome.result as T;
}
