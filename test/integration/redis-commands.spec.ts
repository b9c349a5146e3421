import { jest } from '@jest/globals';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Redis } from 'ioredis';
import {
  CORK_BACKLOG,
  corkBatch,
  corkingSender,
  ioredisPort,
} from '../../lib/stores/redis/ioredis/ioredis.adapter.js';
import type { CommandSender } from '../../lib/stores/redis/redis-client.port.js';
import { loadIoredis } from '../../lib/stores/redis/ioredis/ioredis-internals.js';
import { useRedisServer } from '../harness/use-redis.js';

const COMMANDS = 200;

describe('corkingSender on a real Redis', () => {
  const redis = useRedisServer();
  let client: Redis;
  let send: CommandSender;

  beforeAll(async () => {
    // The store loads ioredis's Command as it starts (its `ready`): then the tricks that need it.
    await loadIoredis();
    client = redis.connect();
    await once(client, 'ready');
    send = corkingSender(client);
  });

  afterEach(async () => {
    await redis.probe.flushall();
  });

  /** INCRs on one counter, all sent in one tick: the replies must count up in sending order. */
  function burst(key: string, count = COMMANDS): Promise<unknown>[] {
    return Array.from({ length: count }, () => send('incr', [key]));
  }

  const upTo = (count: number): number[] => Array.from({ length: count }, (_, i) => i + 1);

  it('a lone command is written at once and resolves with its reply', async () => {
    const set = send('set', ['lone', 'v']);
    // Nothing else awaits a reply: no cork, the bytes are on their way.
    expect(client.stream.writableCorked).toBe(0);
    expect(await set).toBe('OK');
    const get = send('get', ['lone']);
    expect(client.stream.writableCorked).toBe(0);
    expect(await get).toBe('v');
  });

  it(`${COMMANDS} commands sent in one tick all resolve, with their replies in order`, async () => {
    const replies = burst('counter');
    // From the fourth on, commands found CORK_BACKLOG awaiting replies: the socket is corked for now.
    expect(client.stream.writableCorked).toBe(1);

    expect(await Promise.all(replies)).toEqual(upTo(COMMANDS));
    expect(client.stream.writableCorked).toBe(0);
    expect(await redis.probe.get('counter')).toBe(String(COMMANDS));
  });

  it('a long burst: the first commands leave alone, the rest in batches that grow with the backlog', async () => {
    const socket = client.stream;
    let alone = 0;
    let heldBack = 0;
    const batches: { size: number; limit: number }[] = [];
    let limit = 0;
    const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
    const cork = socket.cork.bind(socket);
    const uncork = socket.uncork.bind(socket);
    // ioredis writes each command with one `write`; count those the cork holds back.
    socket.write = ((...args: unknown[]) => {
      if (socket.writableCorked > 0) heldBack++;
      else alone++;
      return write(...args);
    }) as typeof socket.write;
    socket.cork = () => {
      limit = corkBatch(client.commandQueue.length);
      cork();
    };
    socket.uncork = () => {
      batches.push({ size: heldBack, limit });
      heldBack = 0;
      uncork();
    };
    try {
      const replies = burst('batched');
      expect(await Promise.all(replies)).toEqual(upTo(COMMANDS));
    } finally {
      delete (socket as Partial<typeof socket>).write;
      delete (socket as Partial<typeof socket>).cork;
      delete (socket as Partial<typeof socket>).uncork;
    }

    // Until CORK_BACKLOG commands awaited replies, each went in its own write.
    expect(alone).toBe(CORK_BACKLOG);
    expect(batches.reduce((sum, batch) => sum + batch.size, 0)).toBe(COMMANDS - CORK_BACKLOG);
    // Every batch but the last filled up to its limit, a quarter of the backlog it found.
    for (const batch of batches.slice(0, -1)) expect(batch.size).toBe(batch.limit);
    expect(batches[0].size).toBe(CORK_BACKLOG);
    expect(Math.max(...batches.map((batch) => batch.size))).toBeGreaterThanOrEqual(COMMANDS >> 3);
  });

  it('uncorks on the next tick, before any reply, so a corked burst never waits for a reply', async () => {
    const replies = burst('ticked', 10);
    await new Promise<void>((resolve) => process.nextTick(resolve));

    expect(client.stream.writableCorked).toBe(0);
    expect(await Promise.all(replies)).toEqual(upTo(10));
  });

  it('bursts in consecutive ticks keep their order across the corks', async () => {
    const first = burst('ordered', 50);
    await new Promise<void>((resolve) => process.nextTick(resolve));
    const second = burst('ordered', 50);
    await new Promise<void>((resolve) => setImmediate(resolve));
    const third = burst('ordered', 50);

    expect(await Promise.all([...first, ...second, ...third])).toEqual(upTo(150));
  });

  it('mixed commands and an error reply in a corked burst each get their own answer', async () => {
    const replies = [
      send('set', ['text', 'hello']),
      send('incr', ['text']),
      send('append', ['text', ' world']),
      send('get', ['text']),
      send('echo', ['x'.repeat(100_000)]),
    ].map((reply) => reply.then(String, (error: Error) => `error: ${error.message}`));

    const got = await Promise.all(replies);
    expect(got.slice(0, 4)).toEqual([
      'OK',
      'error: ERR value is not an integer or out of range',
      '11',
      'hello world',
    ]);
    expect(got[4]).toBe('x'.repeat(100_000));
  });

  it('works again after the connection is killed and reconnects', async () => {
    expect(await Promise.all(burst('before', 20))).toEqual(upTo(20));
    const id = Number(await client.client('ID'));

    const reconnected = once(client, 'ready');
    await redis.probe.client('KILL', 'ID', String(id));
    await reconnected;

    expect(Number(await client.client('ID'))).not.toBe(id);
    expect(await Promise.all(burst('after'))).toEqual(upTo(COMMANDS));
    expect(await send('get', ['before'])).toBe('20');
    expect(client.stream.writableCorked).toBe(0);
  });

  it('a reader turns each reply into its value as it arrives; a reader that throws rejects', async () => {
    const replies = [
      send('set', ['read', '7'], (reply) => `read ${String(reply)}`),
      send('incr', ['read'], (reply) => (reply as number) * 10),
      send('get', ['read'], () => {
        throw new Error('unreadable');
      }),
      send('incr', ['read'], (reply) => (reply as number) * 10),
    ].map((reply) => reply.then(String, (error: Error) => `error: ${error.message}`));

    expect(await Promise.all(replies)).toEqual(['read OK', '80', 'error: unreadable', '90']);
  });

  it("keeps the client's key prefix, and reads replies with friendly error stacks on", async () => {
    const prefixed = client.duplicate({ keyPrefix: 'pre:' });
    const friendly = client.duplicate({ showFriendlyErrorStack: true });
    try {
      await Promise.all([once(prefixed, 'ready'), once(friendly, 'ready')]);
      const prefixedSend = corkingSender(prefixed);
      const friendlySend = corkingSender(friendly);

      expect(await prefixedSend('set', ['k', 'v'], (reply) => `${String(reply)}!`)).toBe('OK!');
      expect(await redis.probe.get('pre:k')).toBe('v');
      expect(await redis.probe.exists('k')).toBe(0);
      expect(await friendlySend('incr', ['n'], (reply) => (reply as number) + 100)).toBe(101);
      await expect(friendlySend('incr', ['pre:k'])).rejects.toThrow('not an integer');
    } finally {
      prefixed.disconnect();
      friendly.disconnect();
    }
  });

  it('ioredis takes its copy of the arguments as it is: no Array.prototype.flat per command', async () => {
    const args = ['flat', 'v', 'PX', 60_000];
    const flat = jest.spyOn(Array.prototype, 'flat');
    let sent: Promise<unknown>;
    let flatCalls: number;
    try {
      // ioredis builds and writes the command within this call.
      sent = send('set', args);
    } finally {
      flatCalls = flat.mock.calls.length;
      flat.mockRestore();
    }
    expect(flatCalls).toBe(0);
    expect(await sent).toBe('OK');
    // ioredis turned the ttl into a string in its copy, not in the caller's array.
    expect(args).toEqual(['flat', 'v', 'PX', 60_000]);
    // Set with its ttl: without PX the key would have none (-1).
    expect(await redis.probe.pttl('flat')).toBeGreaterThan(30_000);
  });

  it('a script resent after NOSCRIPT on a prefixed client touches its key, prefixed once', async () => {
    const prefixed = client.duplicate({ keyPrefix: 'pre:' });
    try {
      await once(prefixed, 'ready');
      const { script: runScript } = ioredisPort(prefixed);
      const body = "return redis.call('INCRBY', KEYS[1], ARGV[1])";
      const script = { body, sha: createHash('sha1').update(body).digest('hex') };
      await redis.probe.script('FLUSH');

      expect(await runScript(script, ['count'], [5])).toBe(5);
      expect(await runScript(script, ['count'], [5])).toBe(10);
      expect(await redis.probe.get('pre:count')).toBe('10');
      expect(await redis.probe.exists('pre:pre:count')).toBe(0);
    } finally {
      prefixed.disconnect();
    }
  });

  it('commands sent before a new connection is ready resolve in order once it is', async () => {
    const fresh = redis.connect();
    const freshSend = corkingSender(fresh);
    expect(fresh.status).not.toBe('ready');

    const replies = Array.from({ length: COMMANDS }, () => freshSend('incr', ['queued']));
    expect(await Promise.all(replies)).toEqual(upTo(COMMANDS));
    expect(await freshSend('ping', [])).toBe('PONG');
    expect(fresh.stream.writableCorked).toBe(0);
  });
});
