import type { LeaseExtension, LockKind } from '../../lib/stores/lock-store.interface.js';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import { useRedisServer } from '../harness/use-redis.js';

/*
 * One renewal call carries many leases. When they all ask for the same ttl (the common case)
 * it is sent once; otherwise each key gets its own. Either way each key must get its own lease.
 */
describe('EXTEND of many leases in one call', () => {
  const redis = useRedisServer();
  const semaphore: LockKind = { type: 'semaphore', limit: 3 };

  async function take(key: string, token: string, kind?: LockKind): Promise<LeaseExtension> {
    const store = new RedisLockStore(redis.client);
    const won = await store.tryAcquire({ keys: [key], token, ttl: 1_000, fencing: false, kind });
    expect(won.acquired).toBe(true);
    return { keys: [key], token, ttl: 1_000, kind };
  }

  /** Each key's remaining lease, rounded to the second. */
  async function seconds(keys: readonly string[]): Promise<number[]> {
    return Promise.all(keys.map(async (key) => Math.round((await redis.probe.pttl(key)) / 1000)));
  }

  it.each([
    ['mutexes', 'm', undefined],
    ['mutexes and a holder set', 's', semaphore],
  ])(
    'gives each key of %s the ttl asked for, one ttl for all or one each',
    async (_, tag, kind) => {
      const store = new RedisLockStore(redis.client);
      const leases = [
        await take(`lock:${tag}:a`, 'ta'),
        await take(`lock:${tag}:b`, 'tb', kind),
        await take(`lock:${tag}:c`, 'tc'),
      ];
      const keys = leases.map((lease) => lease.keys[0]!);

      const same = leases.map((lease) => ({ ...lease, ttl: 20_000 }));
      expect(await store.extend(same)).toEqual(['extended', 'extended', 'extended']);
      expect(await seconds(keys)).toEqual([20, 20, 20]);

      const each = leases.map((lease, i) => ({ ...lease, ttl: (i + 3) * 10_000 }));
      expect(await store.extend(each)).toEqual(['extended', 'extended', 'extended']);
      expect(await seconds(keys)).toEqual([30, 40, 50]);

      // A stranger's token, among the others, changes nothing of that key.
      const stolen = [{ ...same[0]!, token: 'thief' }, same[1]!, same[2]!];
      expect(await store.extend(stolen)).toEqual(['stolen', 'extended', 'extended']);
      expect(await seconds(keys)).toEqual([30, 20, 20]);
    },
  );
});
