import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { LockOptionsError } from '../errors/lock.errors.js';
import { redisUrlTarget } from '../stores/redis/redis-url.validation.js';
import { isAuthenticationRefusal } from '../stores/store-refusals.js';
import { UsageError } from './exit-codes.js';

/** Redis could not be reached: exit code 3. */
export class UnreachableError extends Error {}

/**
 * A client for one command, not connected yet: no reconnects and no offline queue, so that an
 * unreachable Redis fails the command rather than being waited for, and nothing sent before the
 * command but what the URL asks for (AUTH, SELECT): a server that accepts and never answers
 * would hold each such round trip. `open` connects it; `disconnect()` drops its socket at once.
 */
export function createClient(url: string, cluster: boolean, timeout: number): Redis | Cluster {
  const options: RedisOptions = {
    lazyConnect: true,
    connectTimeout: timeout,
    commandTimeout: timeout,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    // Its INFO would be one more command an ACL user may lack, and ioredis warns on the console.
    enableReadyCheck: false,
    // RESP2, as ioredis 5 speaks it: no HELLO round trip (ioredis 6 sends one to choose RESP3).
    protocol: 2,
    // No CLIENT SETINFO round trips (ioredis 5.4 and later send two).
    disableClientInfo: true,
    // The command is done: ioredis would otherwise wait up to 2 s for the server to close.
    disconnectTimeout: 0,
  };
  return cluster ? clusterOf(url, options, timeout) : redisOf(url, options);
}

/** Connects `client`; an unreachable Redis is an `UnreachableError` (exit code 3). */
export async function open(client: Redis | Cluster): Promise<void> {
  // The socket's error (e.g. ECONNREFUSED) says more than the rejection ("Connection is closed").
  let cause: Error | undefined;
  client.on('error', (error: Error) => (cause ??= error));
  try {
    await client.connect();
  } catch (error) {
    // Credentials refused: Redis answered, with an error (exit 4). Its reply holds no password.
    if (isAuthenticationRefusal(cause)) {
      throw new Error(`Redis refused the credentials: ${cause!.message.trim()}`, { cause });
    }
    // ioredis' messages name host and port, never the URL's password. The cause is kept, for
    // what tells a reply at connect (e.g. to AUTH) from a socket that failed.
    const reason = cause ?? (error as Error);
    throw new UnreachableError(`Cannot reach Redis: ${reason.message}`, { cause: reason });
  }
}

function redisOf(url: string, options: RedisOptions): Redis {
  try {
    // Checked first: ioredis reads a mistyped URL as a socket path, which its errors then quote.
    return new Redis(redisUrlTarget(url, '--redis (or REDIS_URL)'), options);
  } catch (error) {
    throw new UsageError(
      error instanceof LockOptionsError
        ? error.message
        : '--redis (or REDIS_URL) is not a Redis URL: give redis://[user:password@]host:port[/db].',
    );
  }
}

function clusterOf(url: string, options: RedisOptions, timeout: number): Cluster {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(
      '--redis (or REDIS_URL) is not a Redis URL: give redis://[user:password@]host:port.',
    );
  }
  const redisOptions: RedisOptions = {
    ...options,
    username: decodeURIComponent(parsed.username) || undefined,
    password: decodeURIComponent(parsed.password) || undefined,
    ...(parsed.protocol === 'rediss:' && { tls: {} }),
  };
  const node = { host: parsed.hostname || '127.0.0.1', port: Number(parsed.port || 6379) };
  return new Cluster([node], {
    lazyConnect: true,
    enableOfflineQueue: false,
    clusterRetryStrategy: () => null,
    slotsRefreshTimeout: timeout,
    redisOptions,
  });
}
