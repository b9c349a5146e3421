import { AsyncLocalStorage } from 'node:async_hooks';
import type { Lock } from '../lock.interface.js';

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
