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
