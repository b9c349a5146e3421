import { hashTagOf } from './cluster-slot.js';

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
