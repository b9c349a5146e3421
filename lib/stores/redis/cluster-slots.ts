import { LockKeyError } from '../../errors/lock.errors.js';
import { fenceKeyOf, hashTagOf } from './redis-commands.js';

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
