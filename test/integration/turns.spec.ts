import { WAITERS_MARK } from '../../lib/stores/redis/scripts/lua-helpers.js';
import type { Redis } from 'ioredis';
import { LockStoreError } from '../../lib/errors/lock.errors.js';
import { fenceKeyOf, turnsKeyOf } from '../../lib/stores/redis/redis-commands.js';
import {
  batchesOf,
  lineEntriesOf,
  sharesWhileAllWait,
  turnViolations,
} from '../harness/turn-order.js';
import { useTurnProcsOnRedis, type Proc } from '../harness/turn-procs.js';

const KEY = 'hot';
const FULL_KEY = `lock:${KEY}`;
const TURNS = turnsKeyOf(FULL_KEY);

/** Calls to EVALSHA the server has run. */
async function evalshaCalls(client: Redis): Promise<number> {
  const stats = await client.info('commandstats');
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

describe('turns of processes on one hot key', () => {
  const { redis, log, proc, settled, leftovers, inLine } = useTurnProcsOnRedis();

  it('3 processes × 4 workers: no overlap, leases of at most localHandoffs + 1 sections, turns go around', async () => {
    const N = 30;
    const all = ['a', 'b', 'c'].map((name) => proc(name, { localHandoffs: 2 }));
    let holding = 0;
    let most = 0;
    const worker = async ({ engine, store }: Proc): Promise<void> => {
      for (let i = 0; i < N; i++) {
        await engine.withLock(KEY, async (lock) => {
          most = Math.max(most, ++holding);
          log.push({ kind: 'section', store: store.name, token: lock.token });
          await new Promise((resolve) => setTimeout(resolve, 1));
          holding--;
        });
      }
    };
    await Promise.all(all.flatMap((p) => [worker(p), worker(p), worker(p), worker(p)]));
    await settled();

    const batches = batchesOf(log);
    const sectionsOf = (p: Proc) =>
      log.filter((r) => r.kind === 'section' && r.store === p.store.name).length;
    expect(most).toBe(1);
    expect(all.map(sectionsOf)).toEqual([4 * N, 4 * N, 4 * N]);
    expect(Math.max(...batches.map((batch) => batch.sections))).toBeLessThanOrEqual(3);
    // Every lease ended with one release through Redis.
    expect(batches.filter((batch) => batch.releaseAt < 0)).toEqual([]);
    // Once a process is in line, every other process gets at most one lease before it.
    expect(turnViolations(log)).toEqual([]);
    // That check had work to do: each process queued behind the others many times, and the
    // key went from one process to another many times.
    const entries = lineEntriesOf(log);
    for (const p of all) {
      expect(entries.filter((entry) => entry.store === p.store.name).length).toBeGreaterThan(5);
    }
    // While all three wanted the lock, they got about as many leases each.
    const shares = Object.values(sharesWhileAllWait(log, ['a', 'b', 'c']));
    expect(Math.min(...shares)).toBeGreaterThan(5);
    expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
    const switches = batches.filter((batch, i) => i > 0 && batches[i - 1].store !== batch.store);
    expect(switches.length).toBeGreaterThan(20);
    expect(all.flatMap((p) => p.errors)).toEqual([]);
    expect(await leftovers()).toEqual([]);
  });

  it('a turn reserved for a queue that vanished lapses, and the waiter behind the release then gets the key', async () => {
    const p = proc('p', { localHandoffs: 0 });
    const holder = await p.engine.acquire(KEY);
    let waiterHolds = false;
    const waiter = p.engine.acquire(KEY, { wait: 5_000 }).then((lock) => {
      waiterHolds = true;
      return lock;
    });
    // A process that asked for its turn, marking the key as lining up does, and then died.
    await redis.probe.rpush(TURNS, 'gone');
    await redis.probe.set(FULL_KEY, holder.token + WAITERS_MARK, 'KEEPTTL');

    await holder.release();
    const reserved = await redis.probe.get(FULL_KEY);
    const pttl = await redis.probe.pttl(FULL_KEY);

    expect(reserved).toBe('turn:gone');
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(500);
    expect(waiterHolds).toBe(false);
    const lock = await waiter;
    expect(await redis.probe.get(FULL_KEY)).toBe(lock.token);
    await lock.release();
    await settled();
    expect(p.errors).toEqual([]);
    expect(await leftovers()).toEqual([]);
  });

  // TURN_GRACE promises a dead queue holds the others up no longer than 500 ms. A process that
  // was already in line heard the turn go to the dead queue and sleeps on; nothing wakes it when
  // the reservation lapses, so it waits for its poll tick (pollCap), here far beyond its wait.
  it('a process in line behind a vanished queue gets the key once the reservation lapses', async () => {
    const holder = proc('holder');
    const next = proc('next', { pollCap: 30_000 });
    const lock = await holder.engine.acquire(KEY);
    await redis.probe.rpush(TURNS, 'gone');
    const waiting = next.engine.acquire(KEY, { wait: 3_000 });
    const queue = await inLine(next);
    expect(await redis.probe.lrange(TURNS, 0, -1)).toEqual(['gone', queue]);

    await lock.release();
    expect(await redis.probe.get(FULL_KEY)).toBe('turn:gone');

    const taken = await waiting;
    expect(await redis.probe.get(FULL_KEY)).toBe(taken.token);
    await taken.release();
  });

  it('with localHandoffs 0, the release sets the key for the next local waiter in the same call', async () => {
    const p = proc('p', { localHandoffs: 0 });
    const holder = await p.engine.acquire(KEY);
    const waiter = p.engine.acquire(KEY);
    const before = await evalshaCalls(redis.probe);

    await holder.release();
    const lock = await waiter;
    const calls = (await evalshaCalls(redis.probe)) - before;

    expect(await redis.probe.get(FULL_KEY)).toBe(lock.token);
    expect(p.store.records('release')[0].successor).toBe(lock.token);
    expect(p.store.records('released')[0].report.succeeded).toBe(true);
    // The waiter never asked: the holder's attempt is the only one, the release the only script.
    expect(p.store.records('attempt').map((r) => r.token)).toEqual([holder.token]);
    expect(calls).toBe(1);
    await lock.release();
    await settled();
    expect(await leftovers()).toEqual([]);
  });

  it('fenced waiters never take a successor grant or a passed lease: each gets a new fence', async () => {
    const p = proc('p');
    const holder = await p.engine.acquire(KEY);
    const waiters = Array.from({ length: 5 }, () =>
      p.engine.withLock(KEY, (lock) => ({ token: lock.token, fence: lock.fence! }), {
        fencing: true,
      }),
    );
    await holder.release();
    const got = await Promise.all(waiters);
    await settled();

    const fences = got.map((g) => g.fence);
    expect(fences.every((fence, i) => i === 0 || fence > fences[i - 1])).toBe(true);
    expect(new Set(got.map((g) => g.token)).size).toBe(5);
    expect(Number(await redis.probe.get(fenceKeyOf(FULL_KEY)))).toBe(fences[4]);
    expect(p.store.records('release').filter((r) => r.successor !== undefined)).toEqual([]);
    // Each fenced waiter won an attempt of its own.
    const won = p.store.records('attempt').filter((r) => r.acquired);
    expect(won.map((r) => r.token)).toEqual([holder.token, ...got.map((g) => g.token)]);
    expect(await leftovers()).toEqual([]);
  });

  // After a release that gave the key to another process's turn, the key is reserved for that
  // process: an attempt by the releasing process cannot win and only costs a round trip.
  it('a process that gave the key to another turn waits for its own: one attempt, the winning one', async () => {
    const p = proc('p', { localHandoffs: 0, pollCap: 30_000 });
    const other = proc('other', { pollCap: 30_000 });
    const first = await p.engine.acquire(KEY);
    const second = p.engine.acquire(KEY);
    const otherLock = other.engine.acquire(KEY);
    await inLine(other);
    const before = p.store.records('attempt').length;

    await first.release();
    const taken = await otherLock;
    // Holding on gives a needless attempt time to show (it cannot make a correct engine fail).
    await new Promise((resolve) => setTimeout(resolve, 100));
    await taken.release();
    const lock = await second;

    const attempts = p.store.records('attempt').slice(before);
    expect(attempts.map((r) => ({ token: r.token, acquired: r.acquired }))).toEqual([
      { token: lock.token, acquired: true },
    ]);
    await lock.release();
  });

  it('closing every process while two of them wait in line leaves no lock key and no turn list', async () => {
    const [a, b, c] = ['a', 'b', 'c'].map((name) => proc(name));
    const held = await a.engine.acquire(KEY);
    // The holder's work stops when shutdown aborts its signal, and the lock is released then.
    held.signal.addEventListener('abort', () => void held.release());
    const more = a.engine.acquire(KEY).catch((error: unknown) => error);
    const waits = [b, c].map((p) => p.engine.acquire(KEY).catch((error: unknown) => error));
    await Promise.all([inLine(b), inLine(c)]);
    expect(await redis.probe.llen(TURNS)).toBe(2);

    await Promise.all([a, b, c].map((p) => p.engine.close()));
    await settled();

    for (const error of await Promise.all([more, ...waits])) {
      expect(error).toBeInstanceOf(LockStoreError);
    }
    expect(await leftovers()).toEqual([]);
  });
});
