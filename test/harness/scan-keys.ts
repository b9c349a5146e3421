import type { Redis } from 'ioredis';

/** Every key in the database matching `match`, by SCAN (never KEYS), sorted. */
export async function scanKeys(client: Redis, match = '*'): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', match, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys.sort();
}

/** Lock keys (default prefix) in Redis now; fence counters and turn lists are not locks. */
export function lockKeys(probe: Redis): Promise<string[]> {
  return scanKeys(probe, 'lock:*');
}
