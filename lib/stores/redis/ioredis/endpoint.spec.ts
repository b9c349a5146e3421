import { Cluster, Redis } from 'ioredis';
import { endpointOf } from './endpoint.js';

describe('endpointOf', () => {
  const clients: (Redis | Cluster)[] = [];
  const lazy = <T extends Redis | Cluster>(client: T): T => (clients.push(client), client);
  afterEach(() => clients.splice(0).forEach((client) => client.disconnect()));

  it('names a server, with its db and TLS, never its password', () => {
    const options = { lazyConnect: true, password: 'secret' };
    expect(endpointOf(lazy(new Redis({ ...options, host: 'h', port: 7000, db: 2 })))).toBe(
      'redis://h:7000/2',
    );
    expect(endpointOf(lazy(new Redis({ ...options, host: 'h', port: 7000, tls: {} })))).toBe(
      'rediss://h:7000',
    );
  });

  it('says when a Sentinel master or a Cluster is reached over TLS', () => {
    const sentinels = [{ host: 's1', port: 26379 }];
    const sentinel = (tls?: object) =>
      endpointOf(lazy(new Redis({ lazyConnect: true, sentinels, name: 'm', tls })));
    expect(sentinel()).toBe('redis sentinel "m" via s1:26379');
    expect(sentinel({})).toBe('redis sentinel "m" via s1:26379, master over TLS');
    const cluster = (tls?: object) =>
      endpointOf(lazy(new Cluster([{ port: 7000 }], { lazyConnect: true, redisOptions: { tls } })));
    expect(cluster()).toBe('redis cluster');
    expect(cluster({})).toBe('redis cluster over TLS');
  });
});
