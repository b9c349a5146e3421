import { randomFillSync } from 'node:crypto';

const TOKEN_BYTES = 16;
const POOL_TOKENS = 256;
const pool = Buffer.alloc(TOKEN_BYTES * POOL_TOKENS);
let next = POOL_TOKENS;

/**
 * A new owner token: 128 random bits, base64url (22 characters). Random bytes are drawn in
 * batches, since a lock is often taken thousands of times a second.
 */
export function newLockToken(): string {
  if (next === POOL_TOKENS) {
    randomFillSync(pool);
    next = 0;
  }
  const start = next++ * TOKEN_BYTES;
  return pool.toString('base64url', start, start + TOKEN_BYTES);
}
