import { LockKeyError } from '../../errors/lock.errors.js';

/**
 * Separates a lock key from the name of one of its companion keys. It is a control character
 * (ASCII unit separator): key validation refuses those in lock keys and in the key prefix, so no
 * lock key contains it, and no lock key can name a companion key.
 */
export const COMPANION_SEPARATOR = '\x1f';

/** The companions of a lock key; the names only ever follow the separator. */
export type CompanionName = 'fence' | 'turns' | 'writer' | 'released' | 'writes' | 'owners';

/**
 * Names an auxiliary key (fence counter, turn list, release channel) so that Redis Cluster
 * hashes it to the same slot as its lock key. A key without a hash tag becomes the tag itself,
 * since `{k}x` hashes exactly like `k` when `k` has no tag: `{lock:a}␟fence`. A key with a tag
 * (or a stray `}`) keeps it, and its name follows a doubled separator: `lock:{t}:a␟␟fence`. The
 * doubling tells the two forms apart, so `{lock:a}` (a key whose tag is all of it) and `lock:a`
 * get different companions: every companion names exactly one lock key.
 */
export function companionKey(lockKey: string, name: CompanionName): string {
  const sep = COMPANION_SEPARATOR;
  if (hashTagOf(lockKey) !== lockKey || lockKey.includes('}'))
    return `${lockKey}${sep}${sep}${name}`;
  return `{${lockKey}}${sep}${name}`;
}

export const fenceKeyOf = (lockKey: string): string => companionKey(lockKey, 'fence');
export const channelOf = (lockKey: string): string => companionKey(lockKey, 'released');
export const turnsKeyOf = (lockKey: string): string => companionKey(lockKey, 'turns');
export const writerKeyOf = (lockKey: string): string => companionKey(lockKey, 'writer');

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

/** Redis Cluster's key → slot mapping: CRC16 (XMODEM) of the key's hash tag, modulo 16384. */
export function clusterSlot(key: string): number {
  return crc16(Buffer.from(hashTagOf(key))) % 16384;
}

/** The part of the key Redis hashes: the first non-empty `{...}`, or the whole key. */
export function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

const table = new Uint16Array(256).map((_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
  return crc & 0xffff;
});

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) ^ table[((crc >> 8) ^ byte) & 0xff]) & 0xffff;
  return crc;
}
