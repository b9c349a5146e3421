import { Redis } from 'ioredis';

/*
 * Every key the library writes carries an expiry: a key left without one outlives every lease
 * and every process, for ever. The harness checks each throwaway server it stops, so that every
 * integration and chaos spec holds to it.
 */

/** A key the library wrote: a lock under the default prefix, or a companion key (any prefix). */
function isLibraryKey(key: string): boolean {
  return key.startsWith('lock:') || key.includes('\x1f');
}

/**
 * The library's keys without an expiry on the server at `port`; `undefined` when the server
 * does not answer in time (paused, or stopped by the test), which leaves nothing to check.
 */
export async function keysWithoutExpiry(port: number): Promise<string[] | undefined> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    connectTimeout: 500,
    commandTimeout: 1_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await client.scan(cursor, 'COUNT', 1000);
      cursor = next;
      const keys = batch.filter(isLibraryKey);
      const ttls = await Promise.all(keys.map((key) => client.pttl(key)));
      keys.forEach((key, i) => ttls[i] === -1 && found.push(key));
    } while (cursor !== '0');
    return found;
  } catch {
    return undefined;
  } finally {
    client.disconnect();
  }
}

/** Throws, naming them, if any of the servers holds a library key without an expiry. */
export async function expectEveryLockKeyToExpire(ports: readonly number[]): Promise<void> {
  const found = (await Promise.all(ports.map(keysWithoutExpiry))).flatMap((keys) => keys ?? []);
  if (found.length === 0) return;
  const shown = found.slice(0, 10).map((key) => JSON.stringify(key));
  throw new Error(
    `${found.length} library key(s) left without an expiry: ${shown.join(', ')}. ` +
      'Every key the library writes must carry one.',
  );
}
