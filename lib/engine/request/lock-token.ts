import { randomFillSync } from 'node:crypto';

/** 18 random bytes: 144 bits, exactly 24 base64url characters (no padding to cut off). */
const TOKEN_BYTES = 18;
const TOKEN_CHARS = 24;
const POOL_TOKENS = 256;
const pool = Buffer.alloc(TOKEN_BYTES * POOL_TOKENS);
let encoded = '';
let next = POOL_TOKENS;

/**
 * A new owner token: 144 random bits, base64url. Random bytes are drawn and encoded in
 * batches, since a lock is often taken thousands of times a second; each token is then a
 * slice of one string, which costs far less than encoding 18 bytes on their own.
 */
export function newLockToken(): string {
  if (next === POOL_TOKENS) {
    randomFillSync(pool);
    encoded = pool.toString('base64url');
    next = 0;
  }
  const start = next++ * TOKEN_CHARS;
  return encoded.slice(start, start + TOKEN_CHARS);
}
