import { jest } from '@jest/globals';
import type { AcquireRequest } from '../../lib/stores/lock-store.interface.js';
import { MemoryLockStore } from '../../lib/stores/memory/memory-lock.store.js';
import { describeStoreContract } from '../harness/store-contract.js';

function request(
  keys: string[],
  token: string,
  options: Partial<AcquireRequest> = {},
): AcquireRequest {
  return { keys, token, ttl: 10_000, fencing: false, ...options };
}

/** Lets every queued microtask run, so a notification that is coming has come. */
function flushMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe('MemoryLockStore', () => {
  let store: MemoryLockStore;

  beforeEach(() => {
    // Only the clock is faked: lease expiry depends on performance.now(), and moving it by hand
    // makes expiry exact. Microtasks stay real, since release notifications use them.
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick', 'setImmediate'] });
    store = new MemoryLockStore();
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  describe('tryAcquire', () => {
    it('takes a free key and tells a second owner how long the lease has left', async () => {
      expect(await store.tryAcquire(request(['a'], 't1', { ttl: 5_000 }))).toEqual({
        acquired: true,
      });
      jest.advanceTimersByTime(1_500);

      expect(await store.tryAcquire(request(['a'], 't2'))).toEqual({
        acquired: false,
        pttl: 3_500,
      });
      expect(store.keys()).toEqual(['a']);
    });

    it('takes every key or none', async () => {
      await store.tryAcquire(request(['b'], 'holder'));

      expect(await store.tryAcquire(request(['a', 'b', 'c'], 't2'))).toMatchObject({
        acquired: false,
      });
      expect(store.keys()).toEqual(['b']);

      expect(await store.tryAcquire(request(['a', 'c'], 't2'))).toEqual({ acquired: true });
      expect(store.keys().sort()).toEqual(['a', 'b', 'c']);
    });

    it('reports the longest remaining lease among the keys that block', async () => {
      await store.tryAcquire(request(['a'], 't1', { ttl: 1_000 }));
      await store.tryAcquire(request(['b'], 't2', { ttl: 7_000 }));

      expect(await store.tryAcquire(request(['a', 'b', 'c'], 't3'))).toEqual({
        acquired: false,
        pttl: 7_000,
      });
    });

    it('takes a key again once its lease has run out', async () => {
      await store.tryAcquire(request(['a'], 't1', { ttl: 1_000 }));
      jest.advanceTimersByTime(999);
      expect(await store.tryAcquire(request(['a'], 't2'))).toEqual({ acquired: false, pttl: 1 });

      jest.advanceTimersByTime(1);
      expect(store.keys()).toEqual([]);
      expect(await store.tryAcquire(request(['a'], 't2'))).toEqual({ acquired: true });
    });
  });

  describe('fencing', () => {
    it('issues strictly increasing fences per key, across releases, expiry and deletion', async () => {
      const fences: number[] = [];
      const take = async (token: string, ttl = 10_000): Promise<void> => {
        const attempt = await store.tryAcquire(request(['a'], token, { fencing: true, ttl }));
        if (!attempt.acquired || !attempt.fences) throw new Error('expected a fenced grant');
        fences.push(...attempt.fences);
      };

      await take('t1');
      await store.release(['a'], 't1');
      await take('t2', 100);
      jest.advanceTimersByTime(100);
      await store.tryAcquire(request(['a'], 'unfenced', { ttl: 100 }));
      jest.advanceTimersByTime(100);
      await take('t3');
      store.forceDelete('a');
      await take('t4');

      expect(fences).toHaveLength(4);
      for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]);
    });

    it('keeps one counter per key and returns one fence per key of a multi-key grant', async () => {
      await store.tryAcquire(request(['a'], 't1', { fencing: true, ttl: 10 }));
      jest.advanceTimersByTime(10);

      const attempt = await store.tryAcquire(request(['a', 'b'], 't2', { fencing: true }));

      expect(attempt).toEqual({ acquired: true, fences: [2, 1] });
    });

    it('returns no fences when fencing is off', async () => {
      expect(await store.tryAcquire(request(['a'], 't1'))).toEqual({ acquired: true });
    });
  });

  describe('release', () => {
    it('deletes a key its owner releases', async () => {
      await store.tryAcquire(request(['a'], 't1'));

      expect((await store.release(['a'], 't1')).result).toBe('released');
      expect(store.keys()).toEqual([]);
    });

    it('reports "stolen" and leaves the key alone when another owner holds it', async () => {
      await store.tryAcquire(request(['a'], 'other'));

      expect((await store.release(['a'], 't1')).result).toBe('stolen');
      expect(await store.tryAcquire(request(['a'], 't2'))).toMatchObject({ acquired: false });
    });

    it('reports "expired" when the lease has already run out', async () => {
      await store.tryAcquire(request(['a'], 't1', { ttl: 50 }));
      jest.advanceTimersByTime(50);

      expect((await store.release(['a'], 't1')).result).toBe('expired');
    });

    it('releases the keys still ours in a multi-key lock and reports the worst outcome', async () => {
      await store.tryAcquire(request(['a', 'b', 'c'], 't1'));
      store.forceDelete('b');
      expect((await store.release(['a', 'b', 'c'], 't1')).result).toBe('expired');
      expect(store.keys()).toEqual([]);

      await store.tryAcquire(request(['a', 'b', 'c'], 't2'));
      store.forceDelete('b');
      await store.tryAcquire(request(['b'], 'thief'));
      expect((await store.release(['a', 'b', 'c'], 't2')).result).toBe('stolen');
      expect(store.keys()).toEqual(['b']);
    });

    it('is idempotent for the owner: a second release finds the key gone', async () => {
      await store.tryAcquire(request(['a'], 't1'));
      await store.release(['a'], 't1');

      expect((await store.release(['a'], 't1')).result).toBe('expired');
    });
  });

  describe('extend', () => {
    it('re-arms a lease still held by its token', async () => {
      await store.tryAcquire(request(['a'], 't1', { ttl: 1_000 }));
      jest.advanceTimersByTime(900);

      expect(await store.extend([{ keys: ['a'], token: 't1', ttl: 1_000 }])).toEqual(['extended']);
      jest.advanceTimersByTime(900);
      expect(store.keys()).toEqual(['a']);
      jest.advanceTimersByTime(100);
      expect(store.keys()).toEqual([]);
    });

    it('answers per lease: extended, expired or stolen', async () => {
      await store.tryAcquire(request(['mine'], 't1'));
      await store.tryAcquire(request(['theirs'], 'other'));

      const results = await store.extend([
        { keys: ['mine'], token: 't1', ttl: 1_000 },
        { keys: ['gone'], token: 't1', ttl: 1_000 },
        { keys: ['theirs'], token: 't1', ttl: 1_000 },
      ]);

      expect(results).toEqual(['extended', 'expired', 'stolen']);
    });

    it('does not revive a lease that ran out', async () => {
      await store.tryAcquire(request(['a'], 't1', { ttl: 100 }));
      jest.advanceTimersByTime(100);

      expect(await store.extend([{ keys: ['a'], token: 't1', ttl: 1_000 }])).toEqual(['expired']);
      expect(store.keys()).toEqual([]);
    });

    it('reports a multi-key lease stolen if another owner holds any of its keys', async () => {
      await store.tryAcquire(request(['a', 'b'], 't1'));
      store.forceDelete('b');
      await store.tryAcquire(request(['b'], 'thief'));

      expect(await store.extend([{ keys: ['a', 'b'], token: 't1', ttl: 1_000 }])).toEqual([
        'stolen',
      ]);
    });
  });

  describe('release notifications', () => {
    it('notifies the subscribers of a key when its owner releases it', async () => {
      const onRelease = jest.fn();
      const onOtherKey = jest.fn();
      await store.subscribe('a', onRelease);
      await store.subscribe('b', onOtherKey);
      await store.tryAcquire(request(['a'], 't1'));

      await store.release(['a'], 't1');
      await flushMicrotasks();

      expect(onRelease).toHaveBeenCalledTimes(1);
      expect(onOtherKey).not.toHaveBeenCalled();
    });

    it('does not notify when nothing was released', async () => {
      const onRelease = jest.fn();
      await store.subscribe('a', onRelease);
      await store.tryAcquire(request(['a'], 'other'));

      await store.release(['a'], 't1');
      await store.release(['missing'], 't1');
      await flushMicrotasks();

      expect(onRelease).not.toHaveBeenCalled();
    });

    it('stops notifying after unsubscribe and drops the empty subscription', async () => {
      const onRelease = jest.fn();
      const unsubscribe = await store.subscribe('a', onRelease);
      expect(store.subscriptionCount).toBe(1);

      unsubscribe();
      await store.tryAcquire(request(['a'], 't1'));
      await store.release(['a'], 't1');
      await flushMicrotasks();

      expect(onRelease).not.toHaveBeenCalled();
      expect(store.subscriptionCount).toBe(0);
    });

    it('drops every subscription on close', async () => {
      await store.subscribe('a', jest.fn());
      await store.subscribe('b', jest.fn());

      await store.close();

      expect(store.subscriptionCount).toBe(0);
    });
  });
});

describeStoreContract('MemoryLockStore', () => new MemoryLockStore());
