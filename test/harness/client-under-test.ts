import type { Cluster, Redis } from 'ioredis';
import type { RedisClientKind, RedisClientPort } from '../../lib/stores/redis/redis-client.port.js';
import { deferredPort } from '../../lib/stores/redis/deferred-port.js';
import { buildGlide } from '../../lib/stores/redis/glide/glide-builder.js';
import { buildNodeRedis } from '../../lib/stores/redis/node-redis/node-redis-builder.js';

/**
 * The client library the code under test speaks through: `LOCK_TEST_CLIENT` (CI runs the Redis
 * suites once per library, .ci/run), ioredis by default. The tests keep their own ioredis
 * connections to look at and change the server; only the store's client changes.
 */
export function clientUnderTest(name = process.env.LOCK_TEST_CLIENT): RedisClientKind {
  if (name === undefined || name === '' || name === 'ioredis') return 'ioredis';
  if (name === 'node-redis' || name === 'glide') return name;
  throw new Error(`LOCK_TEST_CLIENT: unknown client "${name}" (ioredis, node-redis, glide)`);
}

/**
 * What a store under test is built on, from the test's ioredis connection to the same server
 * (or cluster): that connection itself with ioredis, else a port of the library under test on
 * a client of its own, which the store closes (build it with `ownsClient: true`).
 */
export function storeClientFor(client: Redis | Cluster): {
  client: Redis | Cluster | RedisClientPort;
  owned: boolean;
} {
  const kind = clientUnderTest();
  if (kind === 'ioredis') return { client, owned: false };
  return { client: portLike(client, kind), owned: true };
}

/** A port of `kind` on a client of its own to the server (or cluster) `client` reaches. */
export function portLike(client: Redis | Cluster, kind: 'node-redis' | 'glide'): RedisClientPort {
  const target = client.isCluster
    ? {
        cluster: (
          client as unknown as { startupNodes: { host?: string; port: number }[] }
        ).startupNodes.map(({ host = '127.0.0.1', port }) => `redis://${host}:${port}`),
      }
    : urlOf(client as Redis);
  const build = kind === 'glide' ? () => buildGlide({ target }) : () => buildNodeRedis({ target });
  return deferredPort(kind, client.isCluster, build, `${kind} under test`);
}

function urlOf(client: Redis): string {
  const { host = '127.0.0.1', port = 6379, db = 0, username, password } = client.options;
  const auth = password
    ? `${encodeURIComponent(username ?? '')}:${encodeURIComponent(password)}@`
    : '';
  return `redis://${auth}${host}:${port}/${db}`;
}
