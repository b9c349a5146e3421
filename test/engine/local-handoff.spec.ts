import { ForwardingStore } from '../harness/forwarding-store.js';
import { later } from '../harness/handled-later.js';
import { engineOn } from '../harness/test-engine.js';
import { filter, firstValueFrom } from 'rxjs';
import { LockStoreError } from '../../lib/errors/lock.errors.js';
import type { LockOptions } from '../../lib/engine/request/lock-options.interface.js';
import type {
  AcquireAttempt,
  AcquireRequest,
  ExtendResult,
  LeaseExtension,
  ReleaseOptions,
} from '../../lib/stores/lock-store.interface.js';
import { MemoryLockStore } from '../../lib/stores/memory/memory-lock.store.js';
import { LockEngine, type LockEngineConfig } from '../../lib/engine/lock-engine.js';
import type { LockEvent } from '../../lib/engine/lock.events.js';
import type { Lock } from '../../lib/engine/lock.interface.js';

/**
 * A MemoryLockStore behind a wrapper that logs the token of every acquire and release call, and
 * the token and ttl of every lease extended.
 */
function countingStore(inner = new MemoryLockStore()) {
  const acquires: string[] = [];
  const releases: string[] = [];
  const extends_: { token: string; ttl: number }[] = [];
  const wrapper = new (class extends ForwardingStore {
    override tryAcquire(request: AcquireRequest): Promise<AcquireAttempt> {
      acquires.push(request.token);
      return super.tryAcquire(request);
    }

    override release(keys: readonly string[], token: string, options?: ReleaseOptions) {
      releases.push(token);
      return super.release(keys, token, options);
    }

    override extend(leases: readonly LeaseExtension[]): Promise<ExtendResult[]> {
      extends_.push(...leases.map(({ token, ttl }) => ({ token, ttl })));
      return super.extend(leases);
    }
  })(inner);
  return { wrapper, inner, acquires, releases, extends: extends_ };
}

describe('local hand-offs', () => {
  let store: ReturnType<typeof countingStore>;
  const engines: LockEngine[] = [];

  function createEngine(overrides: Partial<LockEngineConfig> = {}): LockEngine {
    const engine = engineOn(store.wrapper, {
      storeTimeout: 1_000,
      closeStore: () => Promise.resolve(),
      ...overrides,
    });
    engines.push(engine);
    return engine;
  }

  /** Records every event of `engine`, each with the store's live keys at that moment. */
  function record(engine: LockEngine): { events: LockEvent[]; keysAt: string[][] } {
    const log = { events: [] as LockEvent[], keysAt: [] as string[][] };
    engine.events$.subscribe((event) => {
      log.events.push(event);
      log.keysAt.push(store.inner.keys());
    });
    return log;
  }

  beforeEach(() => {
    store = countingStore();
  });

  afterEach(async () => {
    await Promise.all(engines.splice(0).map((engine) => engine.close()));
  });

  it("hands the lease to the next waiter here: same token, confirmed in the store for the waiter's ttl, no attempt, the key stays set", async () => {
    const engine = createEngine();
    const { events, keysAt } = record(engine);
    const holder = await engine.acquire('k');
    // Queued behind a holder of this process, the waiter makes no attempt of its own.
    const waiting = later(engine.acquire('k', { ttl: 20_000 }));

    expect(await holder.release()).toBe('released');
    const lock = await waiting;

    expect(lock.token).toBe(holder.token);
    expect(holder.isHeld).toBe(false);
    expect(lock.isHeld).toBe(true);
    expect(store.acquires).toEqual([holder.token]);
    expect(store.releases).toEqual([]);
    // One compare-and-PEXPIRE, for the waiter's own lease, which the lock now counts.
    expect(store.extends).toEqual([{ token: holder.token, ttl: 20_000 }]);
    expect(lock.remainingTime()).toBeGreaterThan(19_000);
    expect(lock.remainingTime()).toBeLessThanOrEqual(20_000);
    expect(events.map((event) => event.type)).toEqual(['acquired', 'released', 'acquired']);
    expect(events[1]).toMatchObject({ key: 'k', result: 'released' });
    expect(keysAt).toEqual([['lock:k'], ['lock:k'], ['lock:k']]);
    // 'released', not 'expired': the store still held the key under the token passed on.
    expect(await lock.release()).toBe('released');
    expect(store.releases).toEqual([holder.token]);
    expect(store.inner.keys()).toEqual([]);
  });

  it('sends one attempt for requests that arrive together: the later ones wait here behind it', async () => {
    const engine = createEngine();
    const pending = [1, 2, 3].map(() => engine.acquire('k'));

    for (const lock of pending) await (await lock).release();

    expect(store.acquires).toHaveLength(1);
    expect(store.releases).toHaveLength(1);
    expect(engine.stats()).toEqual({ queues: 0, held: 0 });
  });

  it('sends the release after localHandoffs passes in a row through the store, in FIFO order', async () => {
    const engine = createEngine({ localHandoffs: 2 });
    const holder = await engine.acquire('k');
    const order: number[] = [];
    const tokens: string[] = [];
    const waiters = [1, 2, 3, 4, 5].map((n) =>
      later(
        engine.acquire('k').then((lock) => {
          order.push(n);
          tokens.push(lock.token);
          return lock.release();
        }),
      ),
    );

    await holder.release();
    await Promise.all(waiters);

    expect(order).toEqual([1, 2, 3, 4, 5]);
    // Two passes, then a round trip; the lock won from the store starts a new run of two.
    expect(store.acquires).toHaveLength(2);
    const [, won] = store.acquires;
    expect(won).not.toBe(holder.token);
    expect(tokens).toEqual([holder.token, holder.token, won, won, won]);
    expect(store.releases).toEqual([holder.token, won]);
  });

  it("hands a semaphore's places released together to as many waiters, one each, none given back", async () => {
    const engine = createEngine();
    const limit = 2;
    const holders = [await engine.acquire('k', { limit }), await engine.acquire('k', { limit })];
    const waiting = [1, 2].map(() => later(engine.acquire('k', { limit })));

    // Released in the same turn: both confirmations are in flight at once.
    await Promise.all(holders.map((holder) => holder.release()));
    const locks = await Promise.all(waiting);

    expect(locks.map((lock) => lock.token).sort()).toEqual(holders.map((h) => h.token).sort());
    expect(locks.every((lock) => lock.isHeld)).toBe(true);
    expect(store.acquires).toEqual(holders.map((holder) => holder.token));
    // Had both releases picked the head, the second place would have gone back to the store.
    expect(store.releases).toEqual([]);
    for (const lock of locks) expect(await lock.release()).toBe('released');
    expect(store.inner.keys()).toEqual([]);
  });

  it('with localHandoffs: 0 sends every release through the store, each holder with its token', async () => {
    const engine = createEngine({ localHandoffs: 0 });
    const holder = await engine.acquire('k');
    const order: number[] = [];
    const waiters = [1, 2, 3].map((n) =>
      later(engine.acquire('k').then((lock) => (order.push(n), lock.release()))),
    );

    await holder.release();
    await Promise.all(waiters);

    expect(order).toEqual([1, 2, 3]);
    expect(new Set(store.acquires).size).toBe(4);
    expect(store.releases).toEqual(store.acquires);
  });

  it('does not pass the lease to a fenced waiter: a fence must be new for each holder', async () => {
    const engine = createEngine();
    const holder = await engine.acquire('k');
    const waiting = later(engine.acquire('k', { fencing: true }));

    await holder.release();
    const lock = await waiting;

    expect(lock.token).not.toBe(holder.token);
    expect(store.releases).toEqual([holder.token]);
    expect(store.acquires).toEqual([holder.token, lock.token]);
  });

  it.each<[string, LockOptions]>([
    ['autoRenew: false', { autoRenew: false, ttl: 5_000 }],
    ['a ttl shorter than the lease left', { ttl: 1_000 }],
    ['a ttl longer than the lease left', { ttl: 60_000 }],
  ])('passes the lease to a waiter with %s, for its own ttl', async (_name, options) => {
    const engine = createEngine();
    const holder = await engine.acquire('k', { ttl: 10_000 });
    const waiting = later(engine.acquire('k', options));

    await holder.release();
    const lock = await waiting;

    expect(lock.token).toBe(holder.token);
    expect(store.extends).toEqual([{ token: holder.token, ttl: options.ttl }]);
    expect(lock.remainingTime()).toBeGreaterThan(options.ttl! * 0.9);
    expect(lock.remainingTime()).toBeLessThanOrEqual(options.ttl!);
    expect(store.acquires).toEqual([holder.token]);
    expect(await lock.release()).toBe('released');
  });

  it("does not pass on a lease the store lost: the holder's release reports it, and the waiter takes the key from the store", async () => {
    const engine = createEngine();
    const { events } = record(engine);
    const holder = await engine.acquire('k');
    const waiting = later(engine.acquire('k'));
    // Removed behind the holder's back (a forced release, a DEL, a restart), unnoticed yet.
    store.inner.forceDelete('lock:k');

    expect(await holder.release()).toBe('expired');
    const lock = await waiting;

    expect(lock.token).not.toBe(holder.token);
    expect(store.acquires).toEqual([holder.token, lock.token]);
    expect(events).toContainEqual(expect.objectContaining({ type: 'lost', reason: 'vanished' }));
    await lock.release();
  });

  it('fails withLock with LockLostError when the lease it would pass on was lost', async () => {
    const engine = createEngine();
    let entered!: () => void;
    let finish!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const done = new Promise<void>((resolve) => (finish = resolve));
    const outcome = engine
      .withLock('k', async () => {
        entered();
        await done;
        store.inner.forceDelete('lock:k');
        return 'first';
      })
      .catch((error: unknown) => error);
    await inside;
    // Out of the first section's context: a second caller, not a reentrant one.
    const second = later(engine.withLock('k', () => 'second'));
    finish();

    expect(await outcome).toMatchObject({
      name: 'LockLostError',
      reason: 'vanished',
      result: 'first',
    });
    expect(await second).toBe('second');
  });

  it('gives a fenced waiter a new token and a greater fence than the fenced holder before it', async () => {
    const engine = createEngine();
    const holder = await engine.acquire('k', { fencing: true });
    const waiting = later(engine.acquire('k', { fencing: true }));

    await holder.release();
    const lock = await waiting;

    expect(lock.token).not.toBe(holder.token);
    expect(lock.fence).toBeGreaterThan(holder.fence!);
    expect(store.releases).toEqual([holder.token]);
  });

  it('never lets a waiter that could inherit go ahead of a head that cannot', async () => {
    const engine = createEngine();
    const holder = await engine.acquire('k');
    const order: string[] = [];
    const take = (name: string, options?: LockOptions): Promise<Lock> =>
      later(engine.acquire('k', options).then((lock) => (order.push(name), lock)));
    const fenced = take('fenced', { fencing: true });
    const plain = take('plain');

    await holder.release();
    const first = await fenced;
    expect(order).toEqual(['fenced']);
    await first.release();
    const second = await plain;

    expect(order).toEqual(['fenced', 'plain']);
    // The plain waiter needs no fence, so it may inherit the fenced holder's lease.
    expect(second.token).toBe(first.token);
    expect(store.releases).toEqual([holder.token]);
  });

  it('does not pass on a lock that was lost: the waiter waits for the store', async () => {
    const engine = createEngine();
    const { events } = record(engine);
    const lost = firstValueFrom(engine.events$.pipe(filter((event) => event.type === 'lost')));
    const holder = await engine.acquire('k', { ttl: 300 });
    const waiting = later(engine.acquire('k', { ttl: 300 }));

    // An outside actor deletes the key and takes it: the next renewal finds it stolen.
    store.inner.forceDelete('lock:k');
    const lease = { keys: ['lock:k'], token: 'intruder', ttl: 30_000, fencing: false };
    await store.inner.tryAcquire(lease);
    expect(await lost).toMatchObject({ key: 'k', reason: 'stolen' });

    expect(await holder.release()).toBe('stolen');
    // A pass would have emitted the waiter's `acquired` at once, on the intruder's key.
    expect(events.filter((event) => event.type === 'acquired')).toHaveLength(1);
    expect(store.releases).toEqual([holder.token]);

    await store.inner.release(['lock:k'], 'intruder');
    const lock = await waiting;
    expect(lock.token).not.toBe(holder.token);
    expect(store.acquires.at(-1)).toBe(lock.token);
  });

  it('passes nothing once the engine closes: waiters fail, the lease goes back to the store', async () => {
    const engine = createEngine({ shutdownTimeout: 5_000 });
    const { events } = record(engine);
    const holder = await engine.acquire('k');
    const waiting = later(engine.acquire('k'));

    const closing = engine.close();
    await expect(waiting).rejects.toBeInstanceOf(LockStoreError);
    await holder.release();
    await closing;

    expect(holder.isHeld).toBe(false);
    expect(store.releases).toEqual([holder.token]);
    expect(store.inner.keys()).toEqual([]);
    expect(events.filter((event) => event.type === 'acquired')).toHaveLength(1);
  });

  it("renews an inherited lease with the new holder's ttl, past the end of the one it took", async () => {
    const engine = createEngine();
    const holder = await engine.acquire('k', { ttl: 300 });
    const waiting = later(engine.acquire('k', { ttl: 400 }));
    const leaseEnd = performance.now() + holder.remainingTime();

    await holder.release();
    const lock = await waiting;
    expect(lock.token).toBe(holder.token);
    const renewals: number[] = [];
    engine.events$.subscribe((event) => event.type === 'renewed' && renewals.push(event.ttl));
    // Well past the end of the lease taken over: without renewal the store key would be gone.
    await firstValueFrom(
      engine.events$.pipe(
        filter((event) => event.type === 'renewed' && performance.now() > leaseEnd + 100),
      ),
    );

    expect(new Set(renewals)).toEqual(new Set([400]));
    expect(lock.isHeld).toBe(true);
    expect(store.inner.keys()).toEqual(['lock:k']);
    expect(store.acquires).toEqual([holder.token]);
    expect(await lock.release()).toBe('released');
  }, 5_000);
});
