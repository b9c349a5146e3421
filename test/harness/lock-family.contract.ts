import { LockBusyError, LockOptionsError } from '../../lib/errors/lock.errors.js';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import type { Lock } from '../../lib/engine/lock.interface.js';
import { maxConcurrent, writerOverlaps, type Interval } from './intervals.js';
import { waitUntil } from './waits.js';

/** What the lock family's contract runs on: an engine, fresh for each test, and its store's live keys. */
export interface FamilySubject {
  readonly engine: LockEngine;
  /** The store's live lock keys (prefix applied), to check that refusals leave none. */
  keys(): Promise<string[]>;
}

const tick = (ms = 2): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A meeting point for `size` sections: the first `size` to arrive wait for each other (at most
 * 2 s), so a loaded machine that runs each short section alone cannot hide whether the lock
 * admits `size` holders together. Later arrivals pass straight through.
 */
interface Meeting {
  arrive(): Promise<void>;
  close(): void;
}

function meetingOf(size: number): Meeting {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const deadline = setTimeout(() => open(), 2_000);
  return {
    arrive() {
      if (++arrived === size) open();
      return opened;
    },
    close: () => clearTimeout(deadline),
  };
}

/** Records a timed section of `ms`, after meeting the other sections of `meeting` if given. */
async function section(into: Interval[], ms: number, meeting?: Meeting): Promise<void> {
  const enter = process.hrtime.bigint();
  await meeting?.arrive();
  await tick(ms);
  into.push([enter, process.hrtime.bigint()]);
}

/**
 * The semaphore and the read-write lock, as every store that offers them must behave under the
 * engine: `subject` gives a fresh engine for each test.
 */
export function describeLockFamily(subject: () => FamilySubject): void {
  // The current test's engine, read when a test runs.
  const current = {
    get engine() {
      return subject().engine;
    },
  };

  describe('semaphore (limit)', () => {
    it('admits up to limit holders, each with its own token, and refuses the next', async () => {
      const { engine } = current;
      const held = await Promise.all([1, 2, 3].map(() => engine.acquire('export', { limit: 3 })));
      expect(new Set(held.map((lock) => lock.token)).size).toBe(3);
      expect(held[0].kind).toEqual({ type: 'semaphore', limit: 3 });
      expect(await engine.tryAcquire('export', { limit: 3 })).toBeUndefined();
      await held[0].release();
      const fourth = await engine.tryAcquire('export', { limit: 3 });
      expect(fourth?.isHeld).toBe(true);
    });

    it('never has more than limit sections at once among many waiting callers', async () => {
      const sections: Interval[] = [];
      const together = meetingOf(4);
      const calls = Array.from({ length: 24 }, () =>
        current.engine.withLock('export', () => section(sections, 3, together), { limit: 4 }),
      );
      await Promise.all(calls);
      together.close();
      expect(sections).toHaveLength(24);
      expect(maxConcurrent(sections)).toBe(4);
    });

    it('wakes a waiter when a slot frees', async () => {
      const { engine } = current;
      const first = await engine.acquire('s', { limit: 1 });
      const waiting = engine.acquire('s', { limit: 1, wait: 2_000 });
      await tick();
      await first.release();
      await expect(waiting).resolves.toMatchObject({ isHeld: true });
    });

    it('refuses a caller that disagrees on the limit while the key has holders', async () => {
      const { engine } = current;
      await engine.acquire('s', { limit: 3 });
      const mismatch = engine.acquire('s', { limit: 4, wait: 0 });
      await expect(mismatch).rejects.toBeInstanceOf(LockOptionsError);
      await expect(mismatch).rejects.toThrow(/held as a semaphore of limit 3/);
    });

    it('issues strictly increasing fences to its holders', async () => {
      const { engine } = current;
      const a = await engine.acquire('f', { limit: 2, fencing: true });
      const b = await engine.acquire('f', { limit: 2, fencing: true });
      await a.release();
      const c = await engine.acquire('f', { limit: 2, fencing: true });
      expect(a.fence! < b.fence! && b.fence! < c.fence!).toBe(true);
    });

    it('keeps a place until minHold is over, as a mutex keeps its key', async () => {
      const { engine } = current;
      const held = await engine.acquire('m', { limit: 1, minHold: 300 });
      expect(await held.release()).toBe('released');
      expect(await engine.tryAcquire('m', { limit: 1 })).toBeUndefined();
      await expect(engine.acquire('m', { limit: 1, wait: 2_000 })).resolves.toMatchObject({
        isHeld: true,
      });
    });

    it('is reentrant with the same limit, and refuses another kind of lock on the key', async () => {
      const { engine } = current;
      await engine.withLock(
        'r',
        async (outer) => {
          const inner = await engine.acquire('r', { limit: 2 });
          expect(inner.token).toBe(outer.token);
          await expect(engine.acquire('r')).rejects.toThrow(/already held here as a semaphore/);
        },
        { limit: 2 },
      );
      await engine.acquire('r', { limit: 2 });
      await expect(engine.acquire('r', { wait: 0 })).rejects.toThrow(/held as a semaphore/);
    });
  });

  describe('read-write lock (mode)', () => {
    it('lets readers share and a writer exclude everyone', async () => {
      const { engine } = current;
      const readers = await Promise.all([1, 2].map(() => engine.acquire('cfg', { mode: 'read' })));
      expect(await engine.tryAcquire('cfg', { mode: 'write' })).toBeUndefined();
      await Promise.all(readers.map((reader) => reader.release()));
      const writer = await engine.acquire('cfg', { mode: 'write' });
      expect(await engine.tryAcquire('cfg', { mode: 'read' })).toBeUndefined();
      expect(await engine.tryAcquire('cfg', { mode: 'write' })).toBeUndefined();
      await writer.release();
    });

    it('has readers overlap each other and no writer overlap anyone', async () => {
      const reads: Interval[] = [];
      const writes: Interval[] = [];
      const readersTogether = meetingOf(2);
      const calls = Array.from({ length: 30 }, (_, i) =>
        i % 5 === 0
          ? current.engine.withLock('doc', () => section(writes, 2), { mode: 'write' })
          : current.engine.withLock('doc', () => section(reads, 4, readersTogether), {
              mode: 'read',
            }),
      );
      await Promise.all(calls);
      readersTogether.close();
      expect(writes).toHaveLength(6);
      expect(writerOverlaps(writes, reads)).toBe(0);
      expect(maxConcurrent(reads)).toBeGreaterThan(1);
    });

    it('prefers a waiting writer: new readers queue behind it', async () => {
      const { engine } = current;
      const reader = await engine.acquire('w', { mode: 'read' });
      const writer = engine.acquire('w', { mode: 'write', wait: 2_000 });
      await tick(5);
      // The writer waits for the reader; a new reader must not pass it.
      await expect(engine.acquire('w', { mode: 'read', wait: 0 })).rejects.toBeInstanceOf(
        LockBusyError,
      );
      await reader.release();
      const held = await writer;
      expect(held.isHeld).toBe(true);
    });

    it('lets readers in at once after a writer that had waited got in and left', async () => {
      const { engine } = current;
      const reader = await engine.acquire('h', { mode: 'read' });
      // The reader leaves just after the writer's first attempt failed: its next attempt wins.
      const left = new Promise<unknown>((resolve) => {
        const seen = engine.events$.subscribe((event) => {
          if (event.type !== 'contended' || event.key !== 'h') return;
          seen.unsubscribe();
          resolve(reader.release());
        });
      });
      const writer = await engine.acquire('h', { mode: 'write', wait: 5_000 });
      await left;
      await writer.release();
      // No writer waits any more, so a new reader is not held back.
      expect(await engine.tryAcquire('h', { mode: 'read' })).toBeDefined();
    });

    it('holds readers back only for writers that wait', async () => {
      const { engine } = current;
      const reader = await engine.acquire('p', { mode: 'read' });
      expect(await engine.tryAcquire('p', { mode: 'write' })).toBeUndefined();
      expect(await engine.tryAcquire('p', { mode: 'read' })).toBeDefined();
      await expect(engine.acquire('p', { mode: 'write', wait: 50 })).rejects.toBeInstanceOf(
        LockBusyError,
      );
      // The writer gave up: new readers come in again, once its leaving reached the store.
      await waitUntil('a new reader gets in', () => engine.tryAcquire('p', { mode: 'read' }), 500);
      await reader.release();
    });

    it('refuses upgrading read to write in one call chain, and allows reading under a writer', async () => {
      const { engine } = current;
      await engine.withLock(
        'u',
        async () => {
          const upgrade = engine.acquire('u', { mode: 'write' });
          await expect(upgrade).rejects.toBeInstanceOf(LockOptionsError);
          await expect(upgrade).rejects.toThrow(/upgrading a read lock/);
        },
        { mode: 'read' },
      );
      await engine.withLock(
        'u',
        async (writer: Lock) => {
          const read = await engine.acquire('u', { mode: 'read' });
          expect(read.token).toBe(writer.token);
        },
        { mode: 'write' },
      );
    });

    it('fences writers, and refuses a fence for readers before any store call', async () => {
      const { engine } = current;
      const one = await engine.acquire('fw', { mode: 'write', fencing: true });
      await one.release();
      const two = await engine.acquire('fw', { mode: 'write', fencing: true });
      expect(two.fence!).toBeGreaterThan(one.fence!);
      await two.release();
      expect(() => engine.prepare('fr', { mode: 'read', fencing: true })).toThrow(
        /readers get no fence/,
      );
      expect(await subject().keys()).toEqual([]);
    });
  });

  describe('lock family options', () => {
    it.each([
      [{ limit: 0 }, /"limit" must be an integer/],
      [{ limit: 2.5 }, /"limit" must be an integer/],
      [{ mode: 'shared' }, /"mode" must be 'read' or 'write'/],
      [{ limit: 2, mode: 'read' }, /cannot be combined/],
    ])('refuses %j before any store call', (options, message) => {
      expect(() => current.engine.prepare('k', options as never)).toThrow(message);
    });

    it('refuses several keys for a semaphore or a read-write lock', () => {
      expect(() => current.engine.prepare(['a', 'b'], { limit: 2 })).toThrow(/takes one key/);
      expect(() => current.engine.prepare(['a', 'b'], { mode: 'write' })).toThrow(/takes one key/);
    });
  });
}
