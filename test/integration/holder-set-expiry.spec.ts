import type { LockKind } from '../../lib/stores/lock-store.interface.js';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import { useRedisServer } from '../harness/use-redis.js';
import { waitUntil } from '../harness/waits.js';

// A semaphore's or read-write lock's key is a sorted set of its holders' leases. Its own expiry
// must follow the longest live lease, down as well as up: a key that outlives its leases keeps
// a semaphore's limit after its holders, and with it decides which kinds may take the key.
const KEY = 'lock:set';
const kind: LockKind = { type: 'semaphore', limit: 2 };

describe('a holder set expires with its longest live lease', () => {
  const redis = useRedisServer();
  let store: RedisLockStore;
  beforeEach(() => {
    store = new RedisLockStore(redis.client);
  });
  afterEach(async () => {
    await store.close();
    await redis.probe.flushall();
  });

  const take = (token: string, ttl: number) =>
    store.tryAcquire({ keys: [KEY], token, ttl, fencing: false, kind });

  it('follows a lease cut short by extend, then the release of the longest', async () => {
    expect(await take('a', 30_000)).toMatchObject({ acquired: true });
    expect(await take('b', 10_000)).toMatchObject({ acquired: true });
    expect(await redis.probe.pttl(KEY)).toBeGreaterThan(29_000);

    // What a release before minHold sends: the rest of minHold as a shorter lease.
    expect(await store.extend([{ keys: [KEY], token: 'a', ttl: 200, kind }])).toEqual(['extended']);
    const afterCut = await redis.probe.pttl(KEY);
    expect(afterCut).toBeGreaterThan(9_000);
    expect(afterCut).toBeLessThanOrEqual(10_000);

    expect((await store.release([KEY], 'b', { kind })).result).toBe('released');
    expect(await redis.probe.pttl(KEY)).toBeLessThanOrEqual(200);
    // Gone with its last lease: no limit is left behind.
    await waitUntil('the set gone', async () => (await redis.probe.exists(KEY)) === 0, 1_000);
  });
});
