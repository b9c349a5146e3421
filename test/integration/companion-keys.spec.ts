import type { Cluster, Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { turnsKeyOf } from '../../lib/stores/redis/redis-commands.js';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import { engineOn } from '../harness/test-engine.js';
import { useRedisCluster } from '../harness/redis-cluster.js';
import { useRedisServer } from '../harness/use-redis.js';
import { waitUntil } from '../harness/waits.js';

// A lock's companions (fence counter, turn list, writer's mark) once sat at `<key>:fence`,
// `:turns` and `:writer` for a key with a hash tag: the lock keys of the names `<name>:fence`,
// `:turns` and `:writer`. The README's Cluster template `'{{stock}}:{0}'` makes such keys. Each
// test below is one collision seen with that layout, as a user of the engine meets it.

/** A new connection: each engine on its own is a process of its own, as far as Redis can tell. */
type Connect = () => Redis | Cluster;

function describeCompanionCollisions(where: string, connect: Connect): void {
  describe(`companion keys never collide with lock keys (${where})`, () => {
    let engines: LockEngine[] = [];
    const engine = (): LockEngine => {
      const created = engineOn(new RedisLockStore(connect(), { ownsClient: true }));
      engines.push(created);
      return created;
    };
    afterEach(async () => {
      await Promise.all(engines.map((each) => each.close()));
      engines = [];
    });

    it("a fenced lock's fence counter does not hold the lock named '<name>:fence'", async () => {
      const locks = engine();
      const fenced = await locks.acquire('{stock}:42', { fencing: true });
      await fenced.release();
      // The counter outlives the lease by seconds; the lock of that name must be free.
      const other = await locks.tryAcquire('{stock}:42:fence');
      expect(other).toBeDefined();
      await other!.release();
    });

    it("a lock named '<name>:fence' leaves the fences of <name> alone", async () => {
      const locks = engine();
      const held = await locks.acquire('{stock}:43:fence');
      const first = await locks.acquire('{stock}:43', { fencing: true });
      await first.release();
      const second = await locks.acquire('{stock}:43', { fencing: true });
      await second.release();
      expect(second.fence).toBeGreaterThan(first.fence!);
      expect(held.isHeld).toBe(true);
      await held.release();
    });

    it("a lock named '<name>:turns' is not the turn list of <name>", async () => {
      const [holder, waiter] = [engine(), engine()];
      const probe = connect();
      const turns = await holder.acquire('{stock}:44:turns');
      const held = await holder.acquire('{stock}:44');
      // A waiter in another process enters the turn list of {stock}:44.
      const waiting = waiter.acquire('{stock}:44', { wait: 5_000 });
      const inLine = waitUntil('the waiter in line', () =>
        probe.exists(turnsKeyOf('lock:{stock}:44')),
      );
      await Promise.race([inLine, waiting.catch(() => undefined)]);
      probe.disconnect();
      await held.release();
      const taken = await waiting;
      await taken.release();
      await turns.release();
    });

    it("a lock named '<name>:writer' is not the writer's mark of <name>", async () => {
      const locks = engine();
      const held = await locks.acquire('{stock}:46:writer');
      const reader = await locks.tryAcquire('{stock}:46', { mode: 'read' });
      expect(reader).toBeDefined();
      await reader!.release();
      await held.release();
    });
  });
}

describe('on one Redis server', () => {
  const redis = useRedisServer({ clients: false });
  describeCompanionCollisions('one server', () => redis.connect());
});

describe('on a 3-master Redis Cluster', () => {
  const redis = useRedisCluster();
  describeCompanionCollisions('Cluster', () => redis.cluster.client());
});
