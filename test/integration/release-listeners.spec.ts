import type { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockBusyError } from '../../lib/errors/lock.errors.js';
import { turnsKeyOf } from '../../lib/stores/redis/redis-commands.js';
import { LEAVE } from '../../lib/stores/redis/scripts/release.scripts.js';
import { RedlockLockStore } from '../../lib/stores/redlock/redlock-lock.store.js';
import { startRedisFleet, type RedisFleet } from '../harness/redis-fleet.js';
import { engineOn } from '../harness/test-engine.js';
import { useTurnProcsOnRedis } from '../harness/turn-procs.js';
import { errorOf, waitUntil } from '../harness/waits.js';
import { scanKeys } from '../harness/scan-keys.js';

// A release publishes only to the waiters in the key's turn list. Waiters that take no turns
// (multi-key and Redlock locks) enter it as listeners, '*' + queue id. In these tests the
// holder's lease and the waiter's poll cap are both far longer than its wait, so a waiter
// that gets the lock within its wait was woken by the release.
const LONG = 60_000;
const WAIT = 10_000;
const TURNS_A = turnsKeyOf('lock:a');

describe('listeners: waiters that take no turns are woken by the next release', () => {
  const { redis, proc, settled, leftovers, inLine } = useTurnProcsOnRedis();

  it('a process waiting for two keys is listed on the busy one and woken by its release', async () => {
    const holder = proc('holder');
    const waiter = proc('waiter', { pollCap: LONG });
    const lock = await holder.engine.acquire('a', { ttl: LONG });
    const waiting = waiter.engine.acquire(['a', 'b'], { wait: WAIT });
    const queue = await inLine(waiter);
    expect(await redis.probe.lrange(TURNS_A, 0, -1)).toEqual([`*${queue}`]);
    expect(await redis.probe.exists(turnsKeyOf('lock:b'))).toBe(0);

    await lock.release();
    const taken = await waiting;

    expect(await redis.probe.mget('lock:a', 'lock:b')).toEqual([taken.token, taken.token]);
    expect((await leftovers()).sort()).toEqual(['lock:a', 'lock:b']);
    await taken.release();
    await settled();
    expect(await leftovers()).toEqual([]);
  });

  it('a listener that gives up takes its entry out of the list', async () => {
    const holder = proc('holder');
    const waiter = proc('waiter', { pollCap: LONG });
    const lock = await holder.engine.acquire('a', { ttl: LONG });

    const error = await errorOf(() => waiter.engine.acquire(['a', 'b'], { wait: 300 }));
    expect(error).toBeInstanceOf(LockBusyError);
    await settled([waiter]);

    expect(await redis.probe.exists(TURNS_A)).toBe(0);
    await lock.release();
    expect(await leftovers()).toEqual([]);
  });

  // A successor's lease would keep the key in this process for as long as it has waiters, and
  // the listener asleep: a release that finds listeners wakes them and frees the key instead.
  it('a release with a listener in the list wakes it rather than hand the key to the next waiter here', async () => {
    // localHandoffs 0: the release would set the key for the next local waiter (its successor).
    const p = proc('p', { localHandoffs: 0 });
    const listener = proc('listener', { pollCap: LONG });
    const first = await p.engine.acquire('a', { ttl: LONG });
    const second = p.engine.acquire('a', { ttl: LONG });
    const waiting = listener.engine.acquire(['a', 'b'], { wait: WAIT });
    await inLine(listener);

    await first.release();
    expect(p.store.records('released')[0].report).toMatchObject({
      succeeded: false,
      waitersElsewhere: true,
    });
    // Both get the key in time, whichever of them the release let in first.
    const order: string[] = [];
    const takeAndRelease = (name: string, lock: Promise<{ release(): Promise<unknown> }>) =>
      lock.then(async (taken) => {
        order.push(name);
        await taken.release();
      });
    await Promise.all([takeAndRelease('p', second), takeAndRelease('listener', waiting)]);
    expect(order.sort()).toEqual(['listener', 'p']);
    await settled();
    expect(await leftovers()).toEqual([]);
  });
});

describe('listeners on Redlock nodes', () => {
  let fleet: RedisFleet;
  let inspect: Redis[] = [];
  const engines: LockEngine[] = [];

  function redlockEngine(pollCap = 1_000): LockEngine {
    const store = new RedlockLockStore(fleet.clients(), { nodeTimeout: 500, ownsClients: true });
    const engine = engineOn(store, { pollCap });
    engines.push(engine);
    return engine;
  }

  beforeAll(async () => {
    fleet = await startRedisFleet(3);
    inspect = fleet.clients();
    // A leave is sent without awaiting it; loaded, it is one EVALSHA, which lands before the
    // release sent after it. A first use would add a NOSCRIPT fallback that lands after.
    await Promise.all(inspect.map((node) => node.script('LOAD', LEAVE.PUBLISH.body)));
  });

  afterAll(async () => {
    await Promise.all(engines.map((engine) => engine.close()));
    for (const client of inspect) client.disconnect();
    await fleet?.stopAll();
  });

  it('a waiter is listed on every node, woken by the release, and leaves nothing behind', async () => {
    const holder = redlockEngine();
    const waiter = redlockEngine(LONG);
    const lock = await holder.acquire('a', { ttl: LONG });
    const waiting = waiter.acquire('a', { wait: WAIT });
    await waitUntil('the waiter listed on every node', async () => {
      const lists = await Promise.all(inspect.map((node) => node.lrange(TURNS_A, 0, -1)));
      return lists.every((list) => list.length === 1 && list[0].startsWith('*'));
    });

    await lock.release();
    const taken = await waiting;
    await taken.release();

    const left = await Promise.all(inspect.map((node) => scanKeys(node)));
    expect(left).toEqual(inspect.map(() => []));
  });

  it('a waiter that wins on a quorum leaves the list of the node where the key stayed busy', async () => {
    const [stillBusy] = inspect;
    await stillBusy.set('lock:c', 'another-owner', 'PX', LONG);
    const holder = redlockEngine();
    const waiter = redlockEngine(LONG);
    const lock = await holder.acquire('c', { ttl: LONG });
    const waiting = waiter.acquire('c', { wait: WAIT });
    await waitUntil('the waiter listed on every node', async () => {
      const lists = await Promise.all(inspect.map((node) => node.llen(turnsKeyOf('lock:c'))));
      return lists.every((length) => length === 1);
    });

    await lock.release();
    const taken = await waiting;
    // Sent after the leave on each node's connection, so it lands after it.
    await taken.release();

    expect(await stillBusy.exists(turnsKeyOf('lock:c'))).toBe(0);
    expect(await stillBusy.get('lock:c')).toBe('another-owner');
    await stillBusy.del('lock:c');
  });
});
