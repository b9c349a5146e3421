import type { RedisClientPort } from '../redis-client.port.js';
import { nodeRedisPort } from './node-redis.adapter.js';
import type { NodeRedisClientLike } from './node-redis-connection.js';

/** What the module asks of a node-redis client it makes. */
export interface NodeRedisTarget {
  /** A checked URL, node-redis `createClient` options, or a Cluster's nodes (URLs or options). */
  readonly target: string | Record<string, unknown> | { cluster: readonly unknown[] };
}

type Factory = (options: object) => NodeRedisClientLike;

/**
 * Reconnect within half a second of Redis coming back, however long it was away; a refused
 * connection (a wrong password) keeps trying too, and the store says why it fails meanwhile.
 */
const reconnectStrategy = (retries: number): number => Math.min(retries * 50, 500);

/**
 * Loads node-redis (`redis`, else `@redis/client`) and makes the module's client. Not
 * connected: the store connects it on its first call, and waits for it to be ready. Without an
 * offline queue: a command node-redis took while its socket had just closed, before it heard
 * of the close, would otherwise wait there through the reconnects, not fail with the socket.
 */
export async function buildNodeRedis({ target }: NodeRedisTarget): Promise<RedisClientPort> {
  const module = (await import('redis').catch(() => import('@redis/client'))) as unknown as {
    createClient: Factory;
    createCluster: Factory;
  };
  let client: NodeRedisClientLike;
  if (typeof target === 'object' && Array.isArray(target.cluster)) {
    const rootNodes = target.cluster.map((node) =>
      typeof node === 'string' ? { url: node } : node,
    );
    client = module.createCluster({ rootNodes, defaults: { disableOfflineQueue: true } });
  } else {
    const options = typeof target === 'string' ? { url: target } : target;
    const socket = (options as { socket?: object }).socket;
    client = module.createClient({
      disableOfflineQueue: true,
      ...options,
      socket: { reconnectStrategy, ...socket },
    });
  }
  client.on('error', () => undefined);
  return nodeRedisPort(client);
}
