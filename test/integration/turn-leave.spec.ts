import { LockBusyError } from '../../lib/errors/lock.errors.js';
import { turnsKeyOf } from '../../lib/stores/redis/redis-commands.js';
import { useTurnProcsOnRedis } from '../harness/turn-procs.js';
import { errorOf } from '../harness/waits.js';

const KEY = 'hot';
const FULL_KEY = `lock:${KEY}`;
const TURNS = turnsKeyOf(FULL_KEY);

describe('leaving the turn list', () => {
  const { redis, proc, settled, leftovers, inLine } = useTurnProcsOnRedis();

  it('a waiter whose wait runs out leaves no id behind in the turn list', async () => {
    const holder = proc('holder');
    const waiter = proc('waiter');
    const lock = await holder.engine.acquire(KEY);

    const error = await errorOf(() => waiter.engine.acquire(KEY, { wait: 300 }));
    expect(error).toBeInstanceOf(LockBusyError);
    const [queue] = waiter.store.queues();
    expect(queue).toBeDefined();
    await settled([waiter]);

    expect(waiter.store.records('leave').map((r) => r.queue)).toEqual([queue]);
    expect(await redis.probe.lrange(TURNS, 0, -1)).toEqual([]);
    await lock.release();
    expect(await leftovers()).toEqual([]);
  });

  it('an aborted waiter leaves its place, and the others keep theirs', async () => {
    const holder = proc('holder');
    const [first, second] = [proc('first'), proc('second')];
    const lock = await holder.engine.acquire(KEY);
    const controller = new AbortController();
    const aborted = errorOf(() => first.engine.acquire(KEY, { signal: controller.signal }));
    const firstQueue = await inLine(first);
    const secondLock = second.engine.acquire(KEY);
    const secondQueue = await inLine(second);
    expect(await redis.probe.lrange(TURNS, 0, -1)).toEqual([firstQueue, secondQueue]);

    controller.abort(new Error('gave up'));
    expect(await aborted).toEqual(new Error('gave up'));
    await settled([first]);

    expect(await redis.probe.lrange(TURNS, 0, -1)).toEqual([secondQueue]);
    await lock.release();
    const taken = await secondLock;
    expect(await redis.probe.get(FULL_KEY)).toBe(taken.token);
    await taken.release();
    await settled();
    expect(await leftovers()).toEqual([]);
  });

  it('an aborted waiter passes on the turn it was given, and the next in line is woken', async () => {
    const holder = proc('holder');
    // Deaf to notifications and never polling: it sits on the turn it is given.
    const deaf = proc('deaf', { pollCap: 30_000 }, true);
    // Never polling either: only a notification naming its queue wakes it within its wait.
    const next = proc('next', { pollCap: 30_000 });
    const lock = await holder.engine.acquire(KEY);
    const controller = new AbortController();
    const aborted = errorOf(() => deaf.engine.acquire(KEY, { signal: controller.signal }));
    const deafQueue = await inLine(deaf);
    const nextLock = next.engine.acquire(KEY, { wait: 5_000 });
    const nextQueue = await inLine(next);
    expect(await redis.probe.lrange(TURNS, 0, -1)).toEqual([deafQueue, nextQueue]);

    await lock.release();
    expect(await redis.probe.get(FULL_KEY)).toBe(`turn:${deafQueue}`);
    controller.abort(new Error('gave up'));

    expect(await aborted).toEqual(new Error('gave up'));
    const taken = await nextLock;
    expect(await redis.probe.get(FULL_KEY)).toBe(taken.token);
    expect(deaf.store.records('leave').map((r) => r.queue)).toEqual([deafQueue]);
    await taken.release();
    await settled();
    expect(await leftovers()).toEqual([]);
  });

  // The release asks Redis to keep p's place in line for its waiter (requeue), and the waiter
  // gives up before the answer: p's queue then ends without leaving the turn list.
  it('a waiter that gives up while the release ahead of it is in flight leaves no id behind', async () => {
    const other = proc('other', { pollCap: 30_000 });
    const p = proc('p', { localHandoffs: 0 });
    const lock = await p.engine.acquire(KEY);
    const controller = new AbortController();
    const gaveUp = errorOf(() => p.engine.acquire(KEY, { signal: controller.signal }));
    const otherLock = other.engine.acquire(KEY);
    await inLine(other);

    const released = lock.release();
    controller.abort(new Error('gave up'));
    expect(await released).toBe('released');
    expect(await gaveUp).toEqual(new Error('gave up'));
    const taken = await otherLock;
    await settled([p]);

    expect(p.store.records('release')[0].requeue).toBeDefined();
    // Nobody in p waits any more, so nothing of p may stay in line...
    expect(await redis.probe.lrange(TURNS, 0, -1)).toEqual([]);
    await taken.release();
    // ...or the next release would reserve the key for p's dead queue.
    expect(await redis.probe.get(FULL_KEY)).toBeNull();
  });
});
