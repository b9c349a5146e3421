import type { Cluster, Redis } from 'ioredis';

/**
 * Where a client connects, for logs: host, port and db, the Sentinel set or the Cluster's
 * masters, and whether over TLS; never credentials.
 */
export function endpointOf(client: Redis | Cluster): string {
  if (client.isCluster) {
    const cluster = client as Cluster;
    const nodes = cluster.nodes('master').map(({ options }) => `${options.host}:${options.port}`);
    const tls = cluster.options.redisOptions?.tls ? ' over TLS' : '';
    return `redis cluster${nodes.length > 0 ? ` ${nodes.join(',')}` : ''}${tls}`;
  }
  const {
    host = 'localhost',
    port = 6379,
    db = 0,
    path,
    sentinels,
    name,
    tls,
  } = (client as Redis).options;
  if (sentinels?.length) {
    const via = sentinels.map(({ host, port }) => `${host}:${port}`).join(',');
    return `redis sentinel "${name}" via ${via}${tls ? ', master over TLS' : ''}`;
  }
  if (path) return `redis unix:${path}`;
  return `${tls ? 'rediss' : 'redis'}://${host}:${port}${db ? `/${db}` : ''}`;
}
