import type { Redis } from 'ioredis';
import { turnsKeyOf } from '../../lib/stores/redis/redis-commands.js';
import { scanKeys } from '../harness/scan-keys.js';
import { useTurnProcsOnRedis, type Proc } from '../harness/turn-procs.js';
import { sleep, waitUntil } from '../harness/waits.js';

// A listener ('*' + queue id: a multi-key waiter, which takes no turns) in a key's turn list,
// ahead of a process waiting its turn, while the holding process keeps handing the key to its
// own next waiter (the successor a release sets). Each process here is an engine on its own
// connection. Waiters never poll within the test (pollCap far past their wait), so a waiter
// that moves was woken by a release.
const KEY = 'hot';
const FULL_KEY = `lock:${KEY}`;
const TURNS = turnsKeyOf(FULL_KEY);
const LONG = 60_000;

/** Keys the library wrote that would never expire. */
async function keysWithoutExpiry(probe: Redis): Promise<string[]> {
  const keys = await scanKeys(probe);
  const ttls = await Promise.all(keys.map((key) => probe.pttl(key)));
  return keys.filter((_, i) => ttls[i] === -1);
}

describe('listeners in the turn list', () => {
  const { redis, proc, settled, inLine } = useTurnProcsOnRedis();

  /** Three workers of `p` taking the key in a loop, each release setting the next one's lease. */
  function keepBusy(p: Proc): { stop(): Promise<void> } {
    let running = true;
    const worker = async (): Promise<void> => {
      while (running) await p.engine.withLock(KEY, () => sleep(1));
    };
    const workers = [worker(), worker(), worker()];
    return {
      async stop() {
        running = false;
        await Promise.all(workers);
      },
    };
  }

  it('a multi-key waiter at the head of the line holds up no process behind it, and is woken', async () => {
    const holder = proc('holder', { localHandoffs: 0 });
    const multi = proc('multi', { pollCap: LONG });
    const single = proc('single', { pollCap: LONG });
    const first = await holder.engine.acquire(KEY);
    // Workers waiting here behind `first`: each release sets the next one's lease.
    const busy = keepBusy(holder);
    const multiDone = multi.engine.withLock([KEY, 'other'], () => undefined, { wait: 10_000 });
    const listener = `*${await inLine(multi)}`;
    const singleLock = single.engine.acquire(KEY, { wait: 2_500 });
    const queue = await inLine(single);
    expect(await redis.probe.lrange(TURNS, 0, -1)).toEqual([listener, queue]);

    await first.release();
    const taken = await singleLock;
    // Woken by that release, whose notification names another turn: it looks again once the
    // reservation would have lapsed, not at its poll tick.
    const attemptsOf = (p: Proc) => p.store.records('attempt').length;
    await waitUntil('the multi-key waiter woken', () => attemptsOf(multi) > 1, 2_000);
    await taken.release();
    await multiDone;
    await busy.stop();
    await settled();
    expect([holder, multi, single].flatMap((p) => p.errors)).toEqual([]);
    expect(await keysWithoutExpiry(redis.probe)).toEqual([]);
  });

  it('a listener whose process died is dropped, and the process in line behind it gets the key', async () => {
    const holder = proc('holder', { localHandoffs: 0 });
    const single = proc('single', { pollCap: LONG });
    const first = await holder.engine.acquire(KEY);
    const busy = keepBusy(holder);
    // What a multi-key waiter's process leaves in the line when it is killed.
    await redis.probe.rpush(TURNS, '*dead');
    await redis.probe.pexpire(TURNS, LONG);
    const singleLock = single.engine.acquire(KEY, { wait: 2_500 });
    const queue = await inLine(single);
    expect(await redis.probe.lrange(TURNS, 0, -1)).toEqual(['*dead', queue]);

    await first.release();
    const taken = await singleLock;
    expect(await redis.probe.lrange(TURNS, 0, -1)).not.toContain('*dead');
    await taken.release();
    await busy.stop();
    await settled();
    expect([holder, single].flatMap((p) => p.errors)).toEqual([]);
  });

  it('a turn list emptied by a release and written again keeps an expiry', async () => {
    const holder = proc('holder', { localHandoffs: 0 });
    const multi = proc('multi', { pollCap: LONG });
    const first = await holder.engine.acquire(KEY);
    const second = holder.engine.acquire(KEY);
    const multiLock = multi.engine.acquire([KEY, 'other'], { wait: 10_000 });
    await inLine(multi);

    // The release takes the listener out (the list goes), and whatever writes it next must
    // leave an expiry, or the list outlives every lock if the key then expires.
    await first.release();
    expect(await keysWithoutExpiry(redis.probe)).toEqual([]);
    const locks = [second, multiLock].map((lock) =>
      lock.then(async (held) => {
        expect(await keysWithoutExpiry(redis.probe)).toEqual([]);
        await held.release();
      }),
    );
    await Promise.all(locks);
    await settled();
    expect(await keysWithoutExpiry(redis.probe)).toEqual([]);
    expect([holder, multi].flatMap((p) => p.errors)).toEqual([]);
  });
});
