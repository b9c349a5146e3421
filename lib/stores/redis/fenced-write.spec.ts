import { Redis } from 'ioredis';
import { LockOptionsError } from '../../errors/lock.errors.js';
import { fencedWrite, MAX_FENCED_WRITES, type RedisWrite } from './fenced-write.js';

const writes = (count: number): RedisWrite[] =>
  Array.from({ length: count }, (_, i) => ['SET', `stock:${i}`, '1'] as const);

describe('fencedWrite: writes per call', () => {
  // A real client that has never connected: the first command it is given makes it connect, to
  // a port nobody listens on, so whether a call got past validation shows in its status.
  let client: Redis;
  beforeEach(() => {
    client = new Redis({
      host: '127.0.0.1',
      port: 1,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
  });
  afterEach(() => client.disconnect());

  const write = (count: number): Promise<unknown> =>
    fencedWrite(client, { fence: 7, fenceKey: 'stock:fence', writes: writes(count) });

  it('refuses more than MAX_FENCED_WRITES with LockOptionsError, before any command', async () => {
    const error = await write(MAX_FENCED_WRITES + 1).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(LockOptionsError);
    expect((error as Error).message).toContain(
      `at most ${MAX_FENCED_WRITES} writes (MAX_FENCED_WRITES), got ${MAX_FENCED_WRITES + 1}`,
    );
    expect(client.status).toBe('wait');
  });

  it('sends MAX_FENCED_WRITES writes to the client', async () => {
    const error = await write(MAX_FENCED_WRITES).catch((caught: unknown) => caught);

    // The client had the command: it tried to connect, and nobody answered.
    expect(error).not.toBeInstanceOf(LockOptionsError);
    expect(client.status).not.toBe('wait');
  });
});
