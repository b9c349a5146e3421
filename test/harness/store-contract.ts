import { randomUUID } from 'node:crypto';
import type {
  AcquireRequest,
  LockKind,
  LockStore,
  SharedLockType,
} from '../../lib/stores/lock-store.interface.js';
import { LockOptionsError } from '../../lib/errors/lock.errors.js';
import { libraryToken } from './library-tokens.js';
import { maxConcurrent, type Interval } from './intervals.js';
import { engineOn } from './test-engine.js';
import { sleep, waitUntil } from './waits.js';

/** A lease short enough to watch run out in a test, long enough to outlast a few round trips. */
const SHORT_TTL = 150;

/**
 * What every `LockStore` must do, as the engine relies on it: the core calls, and each kind the
 * store says it offers in `kinds`. `MemoryLockStore` is the reference that passes it; run it on
 * your own store with `describeStoreContract('MyStore', () => new MyStore())`.
 */
export function describeStoreContract(
  name: string,
  make: () => LockStore | Promise<LockStore>,
  /** Put in every key: a hash tag, for a store on Redis Cluster. */
  tag = '',
): void {
  describe(`${name} keeps the LockStore contract`, () => {
    let store: LockStore;
    let prefix: string;
    const key = (name: string): string => `${prefix}${name}`;
    const request = (keys: string[], token: string, extra: Partial<AcquireRequest> = {}) =>
      ({ keys, token, ttl: 5_000, fencing: false, ...extra }) satisfies AcquireRequest;

    beforeEach(async () => {
      store = await make();
      prefix = `contract:${tag}${randomUUID().slice(0, 8)}:`;
    });
    afterEach(() => store.close());

    it('takes a free key, and tells a second owner how long the lease has left', async () => {
      expect(await store.tryAcquire(request([key('a')], 't1'))).toMatchObject({ acquired: true });
      const busy = await store.tryAcquire(request([key('a')], 't2'));
      expect(busy.acquired).toBe(false);
      expect(!busy.acquired && busy.pttl > 0 && busy.pttl <= 5_000).toBe(true);
    });

    it("releases only its owner's key, and reports what it found", async () => {
      await store.tryAcquire(request([key('r')], 'owner'));
      expect((await store.release([key('r')], 'thief')).result).toBe('stolen');
      expect((await store.tryAcquire(request([key('r')], 'other'))).acquired).toBe(false);
      expect((await store.release([key('r')], 'owner')).result).toBe('released');
      expect((await store.release([key('r')], 'owner')).result).toBe('expired');
      expect((await store.tryAcquire(request([key('r')], 'other'))).acquired).toBe(true);
    });

    it('takes several keys all or none', async () => {
      await store.tryAcquire(request([key('b')], 'holder'));
      const all = [key('a'), key('b'), key('c')];
      expect((await store.tryAcquire(request(all, 't2'))).acquired).toBe(false);
      expect((await store.tryAcquire(request([key('a'), key('c')], 't3'))).acquired).toBe(true);
    });

    it('lets a lease run out, and extends only a live lease of its owner', async () => {
      await store.tryAcquire(request([key('e')], 'owner', { ttl: SHORT_TTL }));
      const lease = { keys: [key('e')], token: 'owner', ttl: SHORT_TTL };
      expect(await store.extend([lease, { ...lease, token: 'thief' }])).toEqual([
        'extended',
        'stolen',
      ]);
      await sleep(SHORT_TTL + 50);
      expect(await store.extend([lease])).toEqual(['expired']);
      expect((await store.tryAcquire(request([key('e')], 'next'))).acquired).toBe(true);
    });

    it('issues strictly increasing fences, unless it says it cannot', async () => {
      const fenced = async (token: string): Promise<number> => {
        const attempt = await store.tryAcquire(request([key('f')], token, { fencing: true }));
        await store.release([key('f')], token);
        return attempt.acquired ? attempt.fences![0] : NaN;
      };
      if (store.supportsFencing === false) {
        const engine = engineOn(store, { closeStore: async () => undefined });
        await expect(engine.acquire('f', { fencing: true })).rejects.toThrow(LockOptionsError);
        return;
      }
      const fences = [await fenced('t1'), await fenced('t2'), await fenced('t3')];
      expect(fences[0] < fences[1] && fences[1] < fences[2]).toBe(true);
    });

    it('wakes a subscriber that waits for the key when it is released, and no more once it unsubscribes', async () => {
      let heard = 0;
      let witness = 0;
      const unsubscribe = await store.subscribe(key('n'), () => heard++);
      const unsubscribeWitness = await store.subscribe(key('n'), () => witness++);
      // A waiter's failed attempt names its queue: a store may wake only keys someone waits for.
      // Tokens and queue ids of the engine's form, which a store may rely on (see TOKEN_CHARS).
      const token = libraryToken;
      const waiter = request([key('n')], token('waiter'), {
        queue: token('q'),
        takesTurns: false,
      });
      const holdAndRelease = async (owner: string): Promise<void> => {
        await store.tryAcquire(request([key('n')], token(owner)));
        expect((await store.tryAcquire(waiter)).acquired).toBe(false);
        await store.release([key('n')], token(owner));
      };
      await holdAndRelease('owner');
      await waitUntil('the first release is heard', () => heard > 0 && witness > 0);
      unsubscribe();
      const before = heard;
      await holdAndRelease('owner2');
      // The witness, still subscribed, hears the second release; the other must not.
      await waitUntil('the second release is heard', () => witness > 1);
      unsubscribeWitness();
      expect(heard).toBe(before);
    });

    it('under the engine, keeps 20 callers of one key apart', async () => {
      const engine = engineOn(store, { closeStore: async () => undefined, keyPrefix: prefix });
      const sections: Interval[] = [];
      const section = async (): Promise<void> => {
        const enter = process.hrtime.bigint();
        await sleep(1);
        sections.push([enter, process.hrtime.bigint()]);
      };
      await Promise.all(Array.from({ length: 20 }, () => engine.withLock('x', section)));
      await engine.close();
      expect(sections).toHaveLength(20);
      expect(maxConcurrent(sections)).toBe(1);
    });

    it('offers each kind it lists in `kinds`, and the engine refuses the others', async () => {
      const offered = new Set<SharedLockType>(store.kinds ?? []);
      const engine = engineOn(store, { closeStore: async () => undefined, keyPrefix: prefix });
      const semaphore = engine.tryAcquire('s', { limit: 2 });
      const reader = engine.tryAcquire('rw', { mode: 'read' });
      if (!offered.has('semaphore')) await expect(semaphore).rejects.toThrow(LockOptionsError);
      else await expect(semaphore).resolves.toMatchObject({ kind: { type: 'semaphore' } });
      if (!offered.has('read')) await expect(reader).rejects.toThrow(LockOptionsError);
      else await expect(reader).resolves.toMatchObject({ kind: { type: 'read' } });
      await engine.close();
    });

    it('admits a semaphore up to its limit, frees a place on release, and names a conflicting limit', async () => {
      if (!store.kinds?.includes('semaphore')) return expectNotOffered(store, 'semaphore');
      const kind: LockKind = { type: 'semaphore', limit: 2 };
      const take = (token: string, limit = 2) =>
        store.tryAcquire(request([key('s')], token, { kind: { type: 'semaphore', limit } }));
      expect((await take('a')).acquired).toBe(true);
      expect((await take('b')).acquired).toBe(true);
      expect((await take('c')).acquired).toBe(false);
      expect(await take('d', 3)).toMatchObject({ acquired: false, conflict: expect.any(String) });
      expect((await store.release([key('s')], 'a', { kind })).result).toBe('released');
      expect((await take('c')).acquired).toBe(true);
      const lease = { keys: [key('s')], token: 'b', ttl: 5_000, kind };
      expect(await store.extend([lease])).toEqual(['extended']);
    });

    it('shares a read-write key among readers and gives a writer it alone', async () => {
      if (!store.kinds?.includes('write')) return expectNotOffered(store, 'write');
      const take = (token: string, type: 'read' | 'write') =>
        store.tryAcquire(request([key('rw')], token, { kind: { type }, patience: 1_000 }));
      expect((await take('r1', 'read')).acquired).toBe(true);
      expect((await take('r2', 'read')).acquired).toBe(true);
      expect((await take('w', 'write')).acquired).toBe(false);
      // The writer waits now: a new reader queues behind it.
      expect((await take('r3', 'read')).acquired).toBe(false);
      await store.release([key('rw')], 'r1', { kind: { type: 'read' } });
      await store.release([key('rw')], 'r2', { kind: { type: 'read' } });
      expect((await take('w', 'write')).acquired).toBe(true);
      expect((await take('r3', 'read')).acquired).toBe(false);
      expect(await store.tryAcquire(request([key('rw')], 'm'))).toMatchObject({
        acquired: false,
        conflict: expect.any(String),
      });
    });

    // A semaphore released before its minHold keeps its place for what minHold has left (a
    // shorter lease). Once that ends, nothing of it may decide who takes the key.
    it("forgets a semaphore's limit with its last live holder, however its lease was cut short", async () => {
      if (!store.kinds?.includes('semaphore')) return expectNotOffered(store, 'semaphore');
      const engine = engineOn(store, { closeStore: async () => undefined, keyPrefix: prefix });
      await (await engine.acquire('left', { limit: 2, minHold: SHORT_TTL })).release();
      await engine.close();
      await sleep(SHORT_TTL + 100);
      const take = (token: string, kind: LockKind) =>
        store.tryAcquire(request([key('left')], token, { kind }));
      expect(await take('w', { type: 'write' })).toMatchObject({ acquired: true });
      const conflict = expect.stringContaining('read-write');
      expect(await take('s', { type: 'semaphore', limit: 2 })).toMatchObject({ conflict });
      // Behind the writer, a reader waits: busy, not refused as another kind.
      const reader = await take('r', { type: 'read' });
      expect(reader.acquired === false && reader.conflict).toBe(undefined);
      await store.release([key('left')], 'w', { kind: { type: 'write' } });
      expect(await take('r', { type: 'read' })).toMatchObject({ acquired: true });
    });

    it("frees a key whose holders all left to any kind, while a writer's mark still lasts", async () => {
      if (!store.kinds?.includes('semaphore')) return expectNotOffered(store, 'semaphore');
      const take = (token: string, kind: LockKind) =>
        store.tryAcquire(request([key('m')], token, { kind, patience: 5_000 }));
      expect(await take('r', { type: 'read' })).toMatchObject({ acquired: true });
      expect(await take('w', { type: 'write' })).toMatchObject({ acquired: false });
      await store.release([key('m')], 'r', { kind: { type: 'read' } });
      expect(await take('s', { type: 'semaphore', limit: 2 })).toMatchObject({ acquired: true });
      const conflict = expect.stringContaining('limit 2');
      expect(await take('w', { type: 'write' })).toMatchObject({ acquired: false, conflict });
    });
  });
}

/** A store without the kind must not list it: the engine then refuses it before any call. */
function expectNotOffered(store: LockStore, type: SharedLockType): void {
  expect(store.kinds ?? []).not.toContain(type);
}
