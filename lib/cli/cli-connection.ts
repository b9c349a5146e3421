import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { LockOptionsError } from '../errors/lock.errors.js';
import { redisUrlTarget } from '../stores/redis/redis-url.validation.js';
import { isAuthenticationRefusal } from '../stores/store-refusals.js';
import { UsageError } from './exit-codes.js';

/** Redis could not be reached: exit code 3. */
export class UnreachableError extends Error {}

/**
 * A connection for one command: no reconnects and no offline queue, so that an unreachable
 * Redis fails the command within `timeout` rather than being waited for.
 */
export async function connect(
  url: string,
  cluster: boolean,
  timeout: number,
): Promise<Redis | Cluster> {
  const options: RedisOptions = {
    lazyConnect: true,
    connectTimeout: timeout,
    commandTimeout: timeout,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    // Its INFO would be one more command an ACL user may lack, and ioredis warns on the console.
    enableReadyCheck: false,
  };
  const client = cluster ? clusterOf(url, options) : redisOf(url, options);
  // The socket's error (e.g. ECONNREFUSED) says more than the rejection ("Connection is closed").
  let cause: Error | undefined;
  client.on('error', (error: Error) => (cause ??= error));
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    // Credentials refused: Redis answered, with an error (exit 4). Its reply holds no password.
    if (isAuthenticationRefusal(cause)) {
      throw new Error(`Redis refused the credentials: ${cause!.message.trim()}`, { cause });
    }
    // ioredis' messages name host and port, never the URL's password.
    throw new UnreachableError(`Cannot reach Redis: ${(cause ?? (error as Error)).message}`);
  }
  return client;
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

function clusterOf(url: string, options: RedisOptions): Cluster {
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
    redisOptions,
  });
}
