import { Redis } from 'ioredis';
import { allClosed, socketsOpenedBy } from './opened-sockets.js';
import { useRedisServer } from './use-redis.js';

describe('socketsOpenedBy and allClosed', () => {
  const redis = useRedisServer({ clients: false });

  it('hear the socket of a client made in the call, and its close', async () => {
    let client: Redis | undefined;
    const { settled, sockets } = await socketsOpenedBy(() => {
      client = new Redis(redis.server.port, '127.0.0.1');
      throw new Error('rejected after making a client');
    });

    expect(settled.error).toBeInstanceOf(Error);
    expect(sockets).toHaveLength(1);
    client!.disconnect();
    await expect(allClosed(sockets)).resolves.toBeUndefined();
  });

  it('fail when a socket opened in the call stays open', async () => {
    let client: Redis | undefined;
    const { sockets } = await socketsOpenedBy(() => {
      client = new Redis(redis.server.port, '127.0.0.1');
    });

    expect(sockets).toHaveLength(1);
    await expect(allClosed(sockets, 300)).rejects.toThrow(/1 socket\(s\) to close/);
    client!.disconnect();
  });

  it('hear nothing from a call that opens nothing', async () => {
    const { sockets } = await socketsOpenedBy(() => Promise.resolve(1));

    expect(sockets).toEqual([]);
  });
});
