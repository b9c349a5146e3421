import { LockKeyError } from '../../errors/lock.errors.js';
import { clusterSlot, hashTagOf } from './cluster-slot.js';

/**
 * Names an auxiliary key (fence counter, release channel) so that Redis Cluster hashes it to
 * the same slot as its lock key: a key with a hash tag keeps it; a key without one becomes
 * the hash tag itself, since `{k}x` hashes exactly like `k` when `k` has no tag.
 */
export function companionKey(lockKey: string, suffix: string): string {
  if (hashTagOf(lockKey) !== lockKey || lockKey.includes('}')) return `${lockKey}${suffix}`;
  return `{${lockKey}}${suffix}`;
}

export const fenceKeyOf = (lockKey: string): string => companionKey(lockKey, ':fence');
export const channelOf = (lockKey: string): string => companionKey(lockKey, ':released');
export const turnsKeyOf = (lockKey: string): string => companionKey(lockKey, ':turns');
export const writerKeyOf = (lockKey: string): string => companionKey(lockKey, ':writer');

/**
 * Throws `LockKeyError` for keys a Redis Cluster cannot lock together: keys in different slots,
 * or braces that are not a hash tag (the companion keys would land in another slot).
 */
export function checkClusterKeys(keys: readonly string[]): void {
  const stray = keys.find((key) => clusterSlot(fenceKeyOf(key)) !== clusterSlot(key));
  if (stray !== undefined) {
    throw new LockKeyError(
      `Lock key "${stray}" has braces that are not a Redis Cluster hash tag, so its fence counter and ` +
        'release channel cannot share its slot. Use braces only as a hash tag: "{tag}".',
      stray,
    );
  }
  if (new Set(keys.map(clusterSlot)).size <= 1) return;
  throw new LockKeyError(
    `Lock keys ${keys.map((key) => `"${key}"`).join(', ')} fall in different Redis Cluster slots, so they ` +
      'cannot be locked atomically. Give them one hash tag, e.g. "order:{42}:items" and "order:{42}:payment".',
    keys.join(' + '),
  );
}
