import { later } from '../harness/handled-later.js';
import { waitUntil } from '../harness/waits.js';
import { engineOn } from '../harness/test-engine.js';
import { jest } from '@jest/globals';
import { filter, firstValueFrom, toArray } from 'rxjs';
import {
  LockBusyError,
  LockKeyError,
  LockOptionsError,
  LockShutdownError,
  LockStoreError,
} from '../../lib/errors/lock.errors.js';
import { MemoryLockStore } from '../../lib/stores/memory/memory-lock.store.js';
import { currentLock } from '../../lib/engine/hold/held-lock.js';
import { LockEngine, type LockEngineConfig } from '../../lib/engine/lock-engine.js';
import type { LockEvent } from '../../lib/engine/lock.events.js';
import type { Lock } from '../../lib/engine/lock.interface.js';

/** A promise plus the function that resolves it, to hold a critical section open on cue. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Resolves on the engine's first `contended` event: the acquire has tried once and will wait. */
function contended(engine: LockEngine): Promise<LockEvent> {
  return later(firstValueFrom(engine.events$.pipe(filter((event) => event.type === 'contended'))));
}

describe('LockEngine on the MemoryLockStore', () => {
  let store: MemoryLockStore;
  const engines: LockEngine[] = [];

  function createEngine(overrides: Partial<LockEngineConfig> = {}): LockEngine {
    const engine = engineOn(store, {
      storeTimeout: 1_000,
      closeStore: () => Promise.resolve(),
      ...overrides,
    });
    engines.push(engine);
    return engine;
  }

  beforeEach(() => {
    store = new MemoryLockStore();
  });

  afterEach(async () => {
    await Promise.all(engines.splice(0).map((engine) => engine.close()));
  });

  describe('reentrancy', () => {
    it('lets withLock nest on the same key at no store cost; only the outermost release releases', async () => {
      const engine = createEngine();
      const tryAcquire = jest.spyOn(store, 'tryAcquire');
      const release = jest.spyOn(store, 'release');

      await engine.withLock('a', async (outer) => {
        await engine.withLock('a', async (inner) => {
          expect(inner).not.toBe(outer);
          expect(inner.token).toBe(outer.token);
        });
        expect(release).not.toHaveBeenCalled();
        expect(store.keys()).toEqual(['lock:a']);
        expect(outer.isHeld).toBe(true);
      });

      expect(tryAcquire).toHaveBeenCalledTimes(1);
      expect(release).toHaveBeenCalledTimes(1);
      expect(store.keys()).toEqual([]);
    });

    it('gives acquire() inside withLock a nested handle whose release keeps the lock', async () => {
      const engine = createEngine();

      await engine.withLock('a', async (outer) => {
        const nested = await engine.acquire('a', { wait: 0 });
        expect(await nested.release()).toBe('released');
        expect(nested.isHeld).toBe(false);
        expect(outer.isHeld).toBe(true);
        expect(store.keys()).toEqual(['lock:a']);
      });
    });

    it('refuses a multi-key lock that overlaps a key the call chain already holds', async () => {
      const engine = createEngine();
      const tryAcquire = jest.spyOn(store, 'tryAcquire');

      const nested = engine.withLock('a', () => engine.withLock(['a', 'b'], () => undefined));

      // Waiting for 'b' while holding 'a' in an outer lock would deadlock on our own key.
      await expect(nested).rejects.toThrow(LockOptionsError);
      await expect(nested).rejects.toThrow(/already holds 1 of its 2 keys/);
      expect(tryAcquire.mock.calls.map(([request]) => request.keys)).toEqual([['lock:a']]);
      expect(store.keys()).toEqual([]);
    });

    it('is not reentrant for a concurrent caller outside the critical section', async () => {
      const engine = createEngine();
      const entered = gate();
      const leave = gate();
      const holding = engine.withLock('a', async () => {
        entered.open();
        await leave.promise;
      });
      await entered.promise;

      expect(await engine.tryAcquire('a')).toBeUndefined();

      leave.open();
      await holding;
    });

    it('never shares reentrancy between two engines on the same store', async () => {
      const first = createEngine();
      const second = createEngine();

      await first.withLock('a', async () => {
        expect(await second.tryAcquire('a')).toBeUndefined();
        await expect(second.acquire('a', { wait: 0 })).rejects.toBeInstanceOf(LockBusyError);
      });
    });
  });

  describe('currentLock()', () => {
    it('returns the innermost lock of the call chain, across awaits', async () => {
      const engine = createEngine();
      expect(currentLock()).toBeUndefined();

      await engine.withLock('a', async (a) => {
        expect(currentLock()).toBe(a);
        await engine.withLock('b', async (b) => {
          await new Promise((resolve) => setTimeout(resolve, 0));
          expect(currentLock()).toBe(b);
        });
        await engine.withLock('a', async (nested) => {
          expect(currentLock()).toBe(nested);
        });
        expect(currentLock()).toBe(a);
      });

      expect(currentLock()).toBeUndefined();
    });
  });

  describe('multi-key locks', () => {
    it('takes every key or none', async () => {
      const engine = createEngine();
      const blocker = await createEngine().acquire('b');

      expect(await engine.tryAcquire(['a', 'b', 'c'])).toBeUndefined();
      expect(store.keys()).toEqual(['lock:b']);

      await blocker.release();
      const lock = await engine.acquire(['c', 'a', 'b']);
      expect(lock.keys).toEqual(['c', 'a', 'b']);
      expect(lock.key).toBe('c + a + b');
      expect(store.keys().sort()).toEqual(['lock:a', 'lock:b', 'lock:c']);

      await lock.release();
      expect(store.keys()).toEqual([]);
    });

    it("gives one fence per key, in the order given; `fence` is the first key's", async () => {
      const engine = createEngine();
      await (await engine.acquire('a', { fencing: true })).release();

      const lock = await engine.acquire(['b', 'a'], { fencing: true });

      expect(lock.fences).toEqual([1, 2]);
      expect(lock.fence).toBe(1);
      await lock.release();
    });

    it('waits for the busy key and then takes them all', async () => {
      const engine = createEngine();
      const blocker = await createEngine().acquire('b');

      const tried = contended(engine);
      const waiting = later(engine.acquire(['a', 'b']));
      await tried;
      expect(store.keys()).toEqual(['lock:b']);
      await blocker.release();

      const lock = await waiting;
      expect(store.keys().sort()).toEqual(['lock:a', 'lock:b']);
      await lock.release();
    });
  });

  describe('waiting', () => {
    it('hands a lock to the waiters of one process first in, first out', async () => {
      const engine = createEngine();
      const first = await engine.acquire('k');
      const order: number[] = [];
      const takeInTurn = (n: number): Promise<void> =>
        later(
          engine.acquire('k').then(async (lock) => {
            order.push(n);
            await lock.release();
          }),
        );

      const waiters = [1, 2, 3, 4].map(takeInTurn);
      const released = first.release();
      waiters.push(takeInTurn(5));
      await released;
      await Promise.all(waiters);

      expect(order).toEqual([1, 2, 3, 4, 5]);
    });

    it('throws LockBusyError, with the configured status, when the lock stays busy', async () => {
      const engine = createEngine({ busyStatusCode: 423 });
      await createEngine().acquire('k');

      const error = await engine.acquire('k', { wait: 0 }).catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(LockBusyError);
      expect(error).toMatchObject({ key: 'k', statusCode: 423, code: 'LOCK_BUSY' });
    });

    it('rejects a pending acquire with the abort reason and leaves nothing behind', async () => {
      const engine = createEngine();
      const holder = await engine.acquire('k');
      const controller = new AbortController();
      const waiting = later(engine.acquire('k', { signal: controller.signal }));

      controller.abort(new Error('gave up'));
      await expect(waiting).rejects.toThrow('gave up');

      await holder.release();
      expect(store.keys()).toEqual([]);
    });
  });

  describe('events$', () => {
    it('emits contended, acquired and released for a lock that had to wait', async () => {
      const engine = createEngine();
      const events: LockEvent[] = [];
      engine.events$.subscribe((event) => events.push(event));
      const blocker = await createEngine().acquire('k');

      const tried = contended(engine);
      const waiting = later(engine.acquire('k', { fencing: true }));
      await tried;
      await blocker.release();
      const lock = await waiting;
      await lock.release();

      expect(events.map((event) => event.type)).toEqual(['contended', 'acquired', 'released']);
      expect(events[0]).toMatchObject({ key: 'k', pttl: expect.any(Number) });
      expect(events[1]).toMatchObject({ key: 'k', fence: lock.fence, waited: expect.any(Number) });
      expect(events[2]).toMatchObject({ key: 'k', result: 'released' });
    });

    it('emits busy after contended when the lock cannot be had', async () => {
      const engine = createEngine();
      await createEngine().acquire('k');
      const events = firstValueFrom(engine.events$.pipe(toArray()));

      await expect(engine.acquire('k', { wait: 0 })).rejects.toBeInstanceOf(LockBusyError);
      await engine.close();

      expect((await events).map((event) => event.type)).toEqual(['contended', 'busy']);
    });
  });

  describe('releasing', () => {
    it('releases on `await using`, also when the block throws', async () => {
      const engine = createEngine();
      {
        await using lock = await engine.acquire('k');
        expect(lock.isHeld).toBe(true);
        expect(store.keys()).toEqual(['lock:k']);
      }
      expect(store.keys()).toEqual([]);

      const failing = async (): Promise<void> => {
        await using _lock = await engine.acquire('k');
        throw new Error('boom');
      };
      await expect(failing()).rejects.toThrow('boom');
      expect(store.keys()).toEqual([]);
    });

    it('releases after withLock, also when the work throws, and passes the error on', async () => {
      const engine = createEngine();

      await expect(
        engine.withLock('k', () => {
          throw new Error('work failed');
        }),
      ).rejects.toThrow('work failed');

      expect(store.keys()).toEqual([]);
    });

    it('reports what release found: released once, then expired; stolen if another owner holds it', async () => {
      const engine = createEngine();
      const lock = await engine.acquire('k');
      expect(await lock.release()).toBe('released');
      expect(await lock.release()).toBe('released');

      const other = await engine.acquire('j');
      store.forceDelete('lock:j');
      await createEngine().acquire('j');
      expect(await other.release()).toBe('stolen');
      expect(store.keys()).toEqual(['lock:j']);
    });
  });

  describe('bad input', () => {
    it.each<[string, (engine: LockEngine) => Promise<unknown>, new (...args: never[]) => Error]>([
      ['an empty key', (engine) => engine.acquire(''), LockKeyError],
      ['a non-string key', (engine) => engine.acquire(42 as never), LockKeyError],
      ['a bad key in a list', (engine) => engine.tryAcquire(['a', 'b\n']), LockKeyError],
      ['ttl 0', (engine) => engine.acquire('k', { ttl: 0 }), LockOptionsError],
      ['a negative wait', (engine) => engine.tryAcquire('k', { wait: -1 }), LockOptionsError],
      ['an unknown option', (engine) => engine.acquire('k', { tll: 5 } as never), LockOptionsError],
      [
        'bad options to withLock',
        (engine) => engine.withLock('k', () => 1, { ttl: 1.5 }),
        LockOptionsError,
      ],
      [
        'a Map as the options of withLock',
        (engine) => engine.withLock('k', () => 1, new Map([['ttl', 5]]) as never),
        LockOptionsError,
      ],
      [
        'a Date as the options',
        (engine) => engine.acquire('k', new Date() as never),
        LockOptionsError,
      ],
    ])('rejects %s before any store call', async (_name, call, errorType) => {
      const engine = createEngine();
      const storeCalls = [
        jest.spyOn(store, 'tryAcquire'),
        jest.spyOn(store, 'release'),
        jest.spyOn(store, 'subscribe'),
      ];

      await expect(call(engine)).rejects.toBeInstanceOf(errorType);

      for (const spy of storeCalls) expect(spy).not.toHaveBeenCalled();
    });
  });

  describe('close()', () => {
    it('fails pending waiters and refuses new locks with LockShutdownError', async () => {
      const engine = createEngine();
      const held: Lock = await engine.acquire('k');
      const waiting = later(engine.acquire('k', { wait: Infinity }));

      await engine.close();

      await expect(waiting).rejects.toBeInstanceOf(LockShutdownError);
      await expect(engine.acquire('other')).rejects.toBeInstanceOf(LockShutdownError);
      await held.release();
    });

    it("aborts every held lock's signal at once, and releases each when its section ends", async () => {
      const engine = createEngine({ shutdownTimeout: 5_000 });
      const section = gate();
      let held!: Lock;
      const inside = gate();
      const running = engine.withLock('k', async (lock) => {
        held = lock;
        inside.open();
        await section.promise;
      });
      await inside.promise;
      const aborted = new Promise((resolve) => held.signal.addEventListener('abort', resolve));

      const closing = engine.close();
      await aborted;

      expect(held.signal.reason).toBeInstanceOf(LockShutdownError);
      expect(held.signal.reason).toMatchObject({ reason: 'shutdown', key: 'k' });
      // The section still runs: its key stays.
      expect(store.keys()).toEqual(['lock:k']);
      section.open();
      await running;
      await closing;
      expect(store.keys()).toEqual([]);
    });

    it('leaves a lock still held at shutdownTimeout to expire, with renewal stopped', async () => {
      const engine = createEngine({ shutdownTimeout: 50 });
      const held = await engine.acquire('k', { ttl: 300 });

      await engine.close();

      expect(held.signal.aborted).toBe(true);
      expect(store.keys()).toEqual(['lock:k']);
      await waitUntil('the lease to run out', () => store.keys().length === 0, 2_000);
      expect(held.isHeld).toBe(false);
    });

    it('is not held up by an attempt whose store threw instead of rejecting', async () => {
      const engine = createEngine();
      const broken = new Error('store bug');
      jest.spyOn(store, 'tryAcquire').mockImplementationOnce(() => {
        throw broken;
      });

      const failure = await engine.acquire('k').catch((error: unknown) => error);

      expect(failure).toBeInstanceOf(LockStoreError);
      expect((failure as LockStoreError).cause).toBe(broken);
      expect(engine.stats().queues).toBe(0);
      // close() waits for attempts in flight: the failed one must not count as one.
      await engine.close();
      expect(store.keys()).toEqual([]);
    });
  });

  describe('renewal timer', () => {
    afterEach(() => jest.useRealTimers());

    it('locks taken and released one after another share one timer instead of setting one each', async () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
      const engine = createEngine();
      const setTimer = jest.spyOn(globalThis, 'setTimeout');
      const clearTimer = jest.spyOn(globalThis, 'clearTimeout');

      for (let i = 0; i < 100; i++) await (await engine.acquire(`k${i}`, { ttl: 3_000 })).release();
      // One timer for renewals, one for store-call deadlines; neither is set again per lock.
      expect(setTimer.mock.calls.length).toBeLessThanOrEqual(2);
      expect(clearTimer).not.toHaveBeenCalled();

      // The idle timer just lapses, and a lock taken later is still renewed on time.
      jest.advanceTimersByTime(10_000);
      const lock = await engine.acquire('late', { ttl: 3_000 });
      const extend = jest.spyOn(store, 'extend');
      jest.advanceTimersByTime(1_000);
      expect(extend).toHaveBeenCalledTimes(1);
      await lock.release();
    });
  });
});
