import { Redis } from 'ioredis';

/** The ioredis internals the library's store can run without (lib/stores/redis/ioredis-internals.ts). */
const IOREDIS_TRICKS = ['readInParse', 'flatArgs', 'cork', 'failUnanswered', 'socket'];

/**
 * The ioredis internals whose plain fallbacks the library's store uses in this run, for an A/B
 * of each (bench/README.md): BENCH_PLAIN_IOREDIS=all, or names from `IOREDIS_TRICKS` separated
 * by commas. Child processes inherit it.
 */
export const PLAIN_IOREDIS: readonly string[] = plainTricks(process.env.BENCH_PLAIN_IOREDIS);

function plainTricks(given = ''): string[] {
  if (given.trim() === '') return [];
  if (given.trim() === 'all') return IOREDIS_TRICKS;
  const names = given.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !IOREDIS_TRICKS.includes(name));
  if (unknown.length > 0) {
    const known = [...IOREDIS_TRICKS, 'all'].join(', ');
    throw new Error(`BENCH_PLAIN_IOREDIS: unknown ${unknown.join(', ')} (known: ${known})`);
  }
  return names;
}

/**
 * A fresh ioredis connection, resolved once it is ready. With BENCH_PLAIN_IOREDIS, it carries
 * the list the library's store reads (`plainIoredis` in the library; the symbol is registered
 * so that the bench can set it through the package's entry points alone).
 */
export async function connect(url: string): Promise<Redis> {
  const client = new Redis(url, { lazyConnect: true });
  if (PLAIN_IOREDIS.length > 0) {
    Object.assign(client, { [Symbol.for('nestjs-distributed-lock.plainIoredis')]: PLAIN_IOREDIS });
  }
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

export async function quit(client: Redis): Promise<void> {
  await client.quit().catch(() => client.disconnect());
}
