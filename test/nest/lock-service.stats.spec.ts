import { LockService } from '../../lib/nest/lock.service.js';
import { MemoryLockStore } from '../../lib/stores/memory/memory-lock.store.js';
import { nextEvent } from '../harness/engine-events.js';
import { waitUntil } from '../harness/waits.js';

describe('LockService.stats()', () => {
  let store: MemoryLockStore;
  let locks: LockService;
  /** Another process on the same store, holding what `locks` waits for. */
  let other: LockService;

  beforeEach(() => {
    store = new MemoryLockStore();
    locks = new LockService({ store, logger: false });
    other = new LockService({ store, logger: false });
  });

  afterEach(async () => {
    await locks.onApplicationShutdown();
    await other.onApplicationShutdown();
  });

  it('reads 0 held and 0 queues before any lock', () => {
    expect(locks.stats()).toEqual({ held: 0, queues: 0 });
  });

  it('counts each held lock once, and a reentrant hold not again', async () => {
    const a = await locks.acquire('a');
    await locks.withLock('b', async () => {
      await locks.withLock('b', () => undefined);
      expect(locks.stats()).toEqual({ held: 2, queues: 2 });
    });
    expect(locks.stats()).toEqual({ held: 1, queues: 1 });

    await a.release();
    expect(locks.stats()).toEqual({ held: 0, queues: 0 });
  });

  it('counts one queue per busy key however many wait here, and drains to 0', async () => {
    const holder = await other.acquire('k');
    const contended = nextEvent(locks, 'contended', 'k');
    const waiters = [1, 2, 3].map(() => locks.acquire('k', { wait: 5_000 }));
    await contended;
    expect(locks.stats()).toEqual({ held: 0, queues: 1 });

    await holder.release();
    for (const waiter of waiters) await (await waiter).release();
    await waitUntil('the queue to be dropped', () => locks.stats().queues === 0);
    expect(locks.stats()).toEqual({ held: 0, queues: 0 });
  });

  it('counts a wait that ends in an abort out again', async () => {
    const holder = await other.acquire('k');
    const controller = new AbortController();
    const contended = nextEvent(locks, 'contended', 'k');
    const waiting = locks.acquire('k', { wait: 5_000, signal: controller.signal });
    await contended;
    expect(locks.stats()).toEqual({ held: 0, queues: 1 });
    controller.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');

    await waitUntil('the queue to be dropped', () => locks.stats().queues === 0);
    expect(locks.stats()).toEqual({ held: 0, queues: 0 });
    await holder.release();
  });
});
