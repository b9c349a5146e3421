import { Cluster, type Redis } from 'ioredis';

/** Where a client connects, for logs: host, port and db, or the Sentinel set; never credentials. */
export function endpointOf(client: Redis | Cluster): string {
  if (client instanceof Cluster) {
    const nodes = client.nodes('master').map(({ options }) => `${options.host}:${options.port}`);
    return `redis cluster${nodes.length > 0 ? ` ${nodes.join(',')}` : ''}`;
  }
  const { host = 'localhost', port = 6379, db = 0, path, sentinels, name, tls } = client.options;
  if (sentinels?.length)
    return `redis sentinel "${name}" via ${sentinels.map(({ host, port }) => `${host}:${port}`).join(',')}`;
  if (path) return `redis unix:${path}`;
  return `${tls ? 'rediss' : 'redis'}://${host}:${port}${db ? `/${db}` : ''}`;
}
