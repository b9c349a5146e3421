import { Cluster, type Redis } from 'ioredis';

/**
 * Where a client connects, for logs: host, port and db, the Sentinel set or the Cluster's
 * masters, and whether over TLS; never credentials.
 */
export function endpointOf(client: Redis | Cluster): string {
  if (client instanceof Cluster) {
    const nodes = client.nodes('master').map(({ options }) => `${options.host}:${options.port}`);
    const tls = client.options.redisOptions?.tls ? ' over TLS' : '';
    return `redis cluster${nodes.length > 0 ? ` ${nodes.join(',')}` : ''}${tls}`;
  }
  const { host = 'localhost', port = 6379, db = 0, path, sentinels, name, tls } = client.options;
  if (sentinels?.length) {
    const via = sentinels.map(({ host, port }) => `${host}:${port}`).join(',');
    return `redis sentinel "${name}" via ${via}${tls ? ', master over TLS' : ''}`;
  }
  if (path) return `redis unix:${path}`;
  return `${tls ? 'rediss' : 'redis'}://${host}:${port}${db ? `/${db}` : ''}`;
}
