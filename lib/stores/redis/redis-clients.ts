import { LockOptionsError } from '../../errors/lock.errors.js';
import type { RedisClientPort } from './redis-client.port.js';
import { ioredisPort, type IoredisClient } from './ioredis/ioredis.adapter.js';
import { nodeRedisPort } from './node-redis/node-redis.adapter.js';
import type { NodeRedisClientLike } from './node-redis/node-redis-connection.js';
import { glidePort, type GlideClientLike } from './glide/glide.adapter.js';

/*
 * Which client an application gave: told apart by their members, so that no client library is
 * loaded to look. Each adapter works on the client's own object.
 */

/**
 * A Redis client the store takes: an ioredis `Redis` or `Cluster`; a node-redis client,
 * Sentinel client or Cluster (`createClient`, `createSentinel`, `createCluster`); or a Valkey
 * GLIDE `GlideClient` or `GlideClusterClient`.
 */
export type RedisClient = IoredisClient | NodeRedisClientLike | GlideClientLike;
export type { NodeRedisClientLike, GlideClientLike };

const has = (value: object, member: string): boolean =>
  typeof (value as Record<string, unknown>)[member] === 'function';

/** The client library `value` is a client of, if any. */
export function clientKindOf(value: unknown): RedisClientPort['kind'] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (has(value, 'customCommand') && has(value, 'invokeScript')) return 'glide';
  const { isReady, status } = value as { isReady?: unknown; status?: unknown };
  if (has(value, 'sendCommand') && typeof isReady === 'boolean') return 'node-redis';
  if (has(value, 'evalsha') && has(value, 'duplicate') && typeof status === 'string') {
    return 'ioredis';
  }
  return undefined;
}

function isPort(value: unknown): value is RedisClientPort {
  const port = value as Partial<RedisClientPort> | undefined;
  return typeof port?.send === 'function' && typeof port.script === 'function';
}

/** The port for a client (or the port itself). */
export function portOf(client: RedisClient | RedisClientPort): RedisClientPort {
  if (isPort(client)) return client;
  switch (clientKindOf(client)) {
    case 'glide':
      return glidePort(client as GlideClientLike);
    case 'node-redis':
      return nodeRedisPort(client as NodeRedisClientLike);
    case 'ioredis':
      return ioredisPort(client as IoredisClient);
    default:
      throw new LockOptionsError(
        'The Redis store needs a client of ioredis, node-redis or Valkey GLIDE.',
      );
  }
}

const ports = new WeakMap<object, RedisClientPort>();

/** The port for a client, made once per client: for calls that take a client each time. */
export function cachedPortOf(client: RedisClient): RedisClientPort {
  let port = ports.get(client);
  if (!port) ports.set(client, (port = portOf(client)));
  return port;
}
