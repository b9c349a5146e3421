import { jest } from '@jest/globals';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { corkingSender } from '../../lib/stores/redis/ioredis/ioredis.adapter.js';
import { internalsOf, plainIoredis } from '../../lib/stores/redis/ioredis/ioredis-checks.js';
import { IOREDIS_TRICKS, loadIoredis } from '../../lib/stores/redis/ioredis/ioredis-internals.js';
import {
  failUnansweredOnClose,
  OWNED_CLIENT_OPTIONS,
} from '../../lib/stores/redis/ioredis/owned-client.js';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import { RedisServer } from '../harness/redis-server.js';
import { describeStoreContract } from '../harness/store-contract.js';
import { createTestEngine } from '../harness/test-engine.js';
import { useRedisServer } from '../harness/use-redis.js';
import { sleep, waitUntil } from '../harness/waits.js';

// The ioredis internals the Redis store uses, each with its plain fallback: the store gives the
// same answers on either (lib/stores/redis/ioredis-internals.ts).

const LOCKS = 200;
// Long enough that 200 grants taken at once land inside their lease on a loaded CI machine,
// short enough that the two renewals the test waits for take about a second.
const TTL = 1_500;
const every = (on: boolean) => Object.fromEntries(IOREDIS_TRICKS.map((trick) => [trick, on]));
const upTo = (count: number): number[] => Array.from({ length: count }, (_, i) => i + 1);

/** What `LOCKS` locks, taken at once, renewed, extended and released, and a semaphore saw. */
async function workload(client: Redis) {
  const engine = createTestEngine(client);
  const renewals = new Map<string, number>();
  const subscription = engine.events$.subscribe((event) => {
    if (event.type === 'renewed') renewals.set(event.key, (renewals.get(event.key) ?? 0) + 1);
  });
  try {
    const keys = Array.from({ length: LOCKS }, (_, i) => `many:${i}`);
    const locks = await Promise.all(keys.map((key) => engine.acquire(key, { ttl: TTL })));
    const refused = await Promise.allSettled(keys.map((key) => engine.acquire(key, { wait: 0 })));
    await waitUntil('every lease renewed twice', () =>
      keys.every((key) => (renewals.get(key) ?? 0) >= 2),
    );
    const renewedHeld = locks.filter((lock) => lock.isHeld).length;
    // Not renewed, so that no renewal in line goes out after the extend and sets the ttl again.
    const unrenewed = await Promise.all(
      keys.map((key) => engine.acquire(`once:${key}`, { ttl: TTL, autoRenew: false })),
    );
    await Promise.all(unrenewed.map((lock) => lock.extend(60_000)));
    const pttls = await Promise.all(keys.map((key) => client.pttl(`lock:once:${key}`)));
    await Promise.all(unrenewed.map((lock) => lock.release()));

    const fenced: number[] = [];
    for (let i = 0; i < 5; i++) {
      const lock = await engine.acquire('fenced', { fencing: true });
      fenced.push(lock.fence!);
      await lock.release();
    }
    const places = await Promise.allSettled(
      upTo(5).map(() => engine.acquire('places', { limit: 3, wait: 0 })),
    );
    const released = await Promise.all(locks.map((lock) => lock.release()));
    for (const place of places) if (place.status === 'fulfilled') await place.value.release();
    return {
      refused: refused.filter((attempt) => attempt.status === 'rejected').length,
      renewedHeld,
      extended: pttls.filter((pttl) => pttl > 30_000).length,
      fencesIncrease: fenced.every((fence, i) => i === 0 || fence > fenced[i - 1]),
      places: places.filter((place) => place.status === 'fulfilled').length,
      released: [...new Set(released)],
      keysLeft: (await client.keys('lock:*')).length,
    };
  } finally {
    subscription.unsubscribe();
    await engine.close();
  }
}

const EXPECTED = {
  refused: LOCKS,
  renewedHeld: LOCKS,
  extended: LOCKS,
  fencesIncrease: true,
  places: 3,
  released: ['released'],
  keysLeft: 0,
};

describe('ioredis internals, and their plain fallbacks', () => {
  const redis = useRedisServer();
  // The store loads ioredis's Command itself (its `ready`); these checks ask for it at once.
  beforeAll(() => loadIoredis());
  afterEach(() => redis.probe.flushall());

  /** A connection, ready, with `tricks` (when given) turned off. */
  async function connection(tricks?: Parameters<typeof plainIoredis>[1]): Promise<Redis> {
    const client = redis.connect();
    if (tricks) plainIoredis(client, tricks);
    await once(client, 'ready');
    return client;
  }

  it('runs on the ioredis major IOREDIS_MAJOR names (CI), else on the devDependency', () => {
    const { version } = jest.requireActual<{ version: string }>('ioredis/package.json');
    const repo = jest.requireActual<{ devDependencies: Record<string, string> }>(
      '../../package.json',
    );
    const wanted = process.env.IOREDIS_MAJOR ?? /\d+/.exec(repo.devDependencies.ioredis)![0];
    expect(`ioredis ${version}`).toMatch(new RegExp(`^ioredis ${wanted}\\.`));
  });

  it('every trick works with the ioredis the tests run on', async () => {
    expect(internalsOf(await connection())).toEqual(every(true));
  });

  it('plainIoredis turns off the tricks it names, and all by default', async () => {
    const some = await connection(['cork', 'failUnanswered']);
    expect(internalsOf(some)).toEqual({ ...every(true), cork: false, failUnanswered: false });
    // Arguments shaped for the store's own commands are no use without them.
    expect(internalsOf(await connection(['readInParse']))).toMatchObject({ flatArgs: false });
    expect(internalsOf(await connection([]))).toEqual(every(true));
    expect(internalsOf(await connection())).toEqual(every(true));
    const plain = redis.connect();
    plainIoredis(plain);
    expect(internalsOf(plain)).toEqual(every(false));
  });

  it('the store gives the same answers on the tricks and on the fallbacks', async () => {
    const tricks = await workload(await connection());
    const plain = await workload(await connection(IOREDIS_TRICKS));
    expect(tricks).toEqual(EXPECTED);
    expect(plain).toEqual(tricks);
  });

  it('plain: each command goes through client.call in its own write, copied with flat()', async () => {
    const client = await connection(IOREDIS_TRICKS);
    const send = corkingSender(client);
    const call = jest.spyOn(client, 'call');
    const flat = jest.spyOn(Array.prototype, 'flat');
    let replies: Promise<unknown>[];
    let corked: number;
    let flatCalls: number;
    try {
      replies = upTo(50).map(() => send('incr', ['n'], (reply) => (reply as number) * 10));
      corked = client.stream.writableCorked;
    } finally {
      flatCalls = flat.mock.calls.length;
      flat.mockRestore();
    }
    // With the tricks on, the fourth command on would find a backlog and cork the socket.
    expect(corked).toBe(0);
    expect(call).toHaveBeenCalledTimes(50);
    expect(flatCalls).toBeGreaterThanOrEqual(50);
    expect(await Promise.all(replies)).toEqual(upTo(50).map((n) => n * 10));
  });

  it('a client whose command queue and socket moved gets the plain paths, and the same answers', async () => {
    const client = await connection();
    // An ioredis that keeps these elsewhere: ioredis's own methods still see them.
    const moved = new Proxy(client, {
      get(target, name) {
        if (name === 'commandQueue' || name === 'stream') return undefined;
        const value: unknown = Reflect.get(target, name, target);
        return typeof value === 'function'
          ? (value as (...args: unknown[]) => unknown).bind(target)
          : value;
      },
    });
    expect(internalsOf(moved)).toMatchObject({ cork: false, failUnanswered: false });
    expect(await workload(moved)).toEqual(EXPECTED);
  });

  it('failUnanswered fails what a dropped connection left; plain, the caller waits for its deadline', async () => {
    const lost = async (tricks?: typeof IOREDIS_TRICKS) => {
      const client = new Redis({ port: redis.server.port, ...OWNED_CLIENT_OPTIONS });
      client.on('error', () => undefined);
      if (tricks) plainIoredis(client, tricks);
      failUnansweredOnClose(client);
      try {
        await client.connect();
        const id = String(await client.client('ID'));
        const settled = client.blpop('never', 10).then(String, (error: Error) => error.message);
        await waitUntil('BLPOP blocks', async () =>
          String(await redis.probe.client('LIST')).includes('cmd=blpop'),
        );
        const back = once(client, 'ready');
        await redis.probe.client('KILL', 'ID', id);
        await back;
        return await Promise.race([settled, sleep(200).then(() => 'unsettled')]);
      } finally {
        client.disconnect();
      }
    };
    expect(await lost()).toMatch('Connection closed before the reply came');
    expect(await lost(IOREDIS_TRICKS)).toBe('unsettled');
  });
});

describe('on one Redis server, with every ioredis trick off', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterAll(() => server?.stop());
  describeStoreContract('RedisLockStore (plain ioredis)', () => {
    const client = server.client();
    plainIoredis(client);
    return new RedisLockStore(client, { ownsClient: true });
  });
});
