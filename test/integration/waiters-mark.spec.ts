import { WAITERS_MARK } from '../../lib/stores/redis/scripts/lua-helpers.js';
import { useTurnProcsOnRedis } from '../harness/turn-procs.js';
import { callsBetween, commandCalls } from '../harness/command-stats.js';
import { errorOf, waitUntil } from '../harness/waits.js';
import { LockBusyError } from '../../lib/errors/lock.errors.js';

// A mutex key's value ends with the waiters' mark once another process is in its turn list, and
// only then does a release read the list. In these tests the holders' leases and the waiters'
// poll caps are far longer than the waits, so a waiter that gets the lock in time was woken by
// the release, which found the mark.
const LONG = 60_000;
const WAIT = 10_000;

describe("the waiters' mark: a release reads the turn list only when someone else waits", () => {
  const { redis, proc, settled, leftovers, inLine } = useTurnProcsOnRedis();

  it('a process that lines up marks the key; the release wakes it, and its own value is plain', async () => {
    const holder = proc('holder');
    const waiter = proc('waiter', { pollCap: LONG });
    const lock = await holder.engine.acquire('a', { ttl: LONG });
    expect(await redis.probe.get('lock:a')).toBe(lock.token);

    const waiting = waiter.engine.acquire('a', { ttl: LONG, wait: WAIT });
    await inLine(waiter);
    expect(await redis.probe.get('lock:a')).toBe(lock.token + WAITERS_MARK);

    await lock.release();
    const taken = await waiting;
    expect(await redis.probe.get('lock:a')).toBe(taken.token);
    await taken.release();
    await settled();
    expect(await leftovers()).toEqual([]);
  });

  it('a process that takes its turn with others still in line keeps the key marked', async () => {
    const holder = proc('holder');
    const [first, second] = [proc('first', { pollCap: LONG }), proc('second', { pollCap: LONG })];
    const lock = await holder.engine.acquire('a', { ttl: LONG });
    const firstWaits = first.engine.acquire('a', { ttl: LONG, wait: WAIT });
    await inLine(first);
    const secondWaits = second.engine.acquire('a', { ttl: LONG, wait: WAIT });
    await inLine(second);

    await lock.release();
    const firstLock = await firstWaits;
    expect(await redis.probe.get('lock:a')).toBe(firstLock.token + WAITERS_MARK);
    await firstLock.release();
    const secondLock = await secondWaits;
    expect(await redis.probe.get('lock:a')).toBe(secondLock.token);
    await secondLock.release();
    await settled();
    expect(await leftovers()).toEqual([]);
  });

  it('a marked lease is renewed and released like a plain one', async () => {
    const holder = proc('holder');
    const waiter = proc('waiter', { pollCap: LONG });
    let renewals = 0;
    holder.engine.events$.subscribe((event) => event.type === 'renewed' && renewals++);
    const lock = await holder.engine.acquire('a', { ttl: 600 });
    const waiting = waiter.engine.acquire('a', { wait: WAIT });
    await inLine(waiter);
    // Three renewals (one every 200 ms) of the marked value: still held, still marked.
    await waitUntil('three renewals', () => renewals >= 3);
    expect(lock.signal.aborted).toBe(false);
    expect(await redis.probe.get('lock:a')).toBe(lock.token + WAITERS_MARK);
    expect(await redis.probe.pttl('lock:a')).toBeGreaterThan(300);

    expect(await lock.release()).toBe('released');
    await (await waiting).release();
    expect(holder.errors).toEqual([]);
  });

  it('an unmarked release reads one key; a marked one hands the key on in the same call', async () => {
    const holder = proc('holder');
    const alone = await holder.engine.acquire('a', { ttl: LONG });
    let before = await commandCalls(redis.probe);
    await alone.release();
    expect(callsBetween(before, await commandCalls(redis.probe))).toEqual({
      evalsha: 1,
      get: 1,
      del: 1,
    });

    const waiter = proc('waiter', { pollCap: LONG });
    const watched = await holder.engine.acquire('a', { ttl: LONG });
    const waiting = waiter.engine.acquire('a', { ttl: LONG, wait: WAIT });
    await inLine(waiter);
    before = await commandCalls(redis.probe);
    await watched.release();
    const calls = callsBetween(before, await commandCalls(redis.probe));
    // One script: the release, the turn and the notice (the turn list named from the key).
    expect(calls).toMatchObject({ evalsha: 1, lpop: 1, publish: 1 });
    expect(calls.eval).toBeUndefined();
    await (await waiting).release();
  });

  it('the last waiter to give up takes the mark with it', async () => {
    const holder = proc('holder');
    const waiter = proc('waiter', { pollCap: LONG });
    const lock = await holder.engine.acquire('a', { ttl: LONG });
    const gaveUp = errorOf(() => waiter.engine.acquire('a', { wait: 300 }));
    await inLine(waiter);
    expect(await redis.probe.get('lock:a')).toBe(lock.token + WAITERS_MARK);

    expect(await gaveUp).toBeInstanceOf(LockBusyError);
    await settled([waiter]);
    expect(await redis.probe.get('lock:a')).toBe(lock.token);
    expect(await lock.release()).toBe('released');
  });

  // The canary: a key whose mark is gone (overwritten here by hand) is released as if nobody
  // waited, and the waiter, which relies on the release's notification, is not woken in time.
  it('canary: without the mark, the release does not wake the waiter', async () => {
    const holder = proc('holder');
    const waiter = proc('waiter', { pollCap: LONG });
    const lock = await holder.engine.acquire('a', { ttl: LONG });
    const waiting = errorOf(() => waiter.engine.acquire('a', { wait: 1_000 }));
    await inLine(waiter);
    await redis.probe.set('lock:a', lock.token, 'KEEPTTL');

    await lock.release();
    expect(await redis.probe.exists('lock:a')).toBe(0);
    expect(await waiting).toBeInstanceOf(LockBusyError);
  });

  describe("another client's value is never changed", () => {
    /** Standard compare-and-delete and compare-and-PEXPIRE, as other lock clients send them. */
    const COMPARE_AND_EXPIRE =
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";
    const COMPARE_AND_DELETE =
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

    it.each([
      ['30 hex characters', '0123456789abcdef0123456789abcd'],
      ['30 base64url characters', 'AbCdEfGhIjKlMnOpQrStUvWxYz_-09'],
      ['a short token', 'job-1'],
      ['a token ending with the mark', 'worker-7!'],
      ['a 36-character uuid', '6b1e4b9e-2f0a-4d8e-9c3a-1f2e3d4c5b6a'],
    ])('%s: a waiter lines up, and the value stays as its client wrote it', async (_, token) => {
      const waiter = proc('waiter', { pollCap: 200 });
      expect(await redis.probe.set('lock:job', token, 'PX', 4_000, 'NX')).toBe('OK');
      const waiting = waiter.engine.acquire('job', { ttl: LONG, wait: WAIT });
      await inLine(waiter);

      expect(await redis.probe.get('lock:job')).toBe(token);
      expect(await redis.probe.eval(COMPARE_AND_EXPIRE, 1, 'lock:job', token, 4_000)).toBe(1);
      expect(await redis.probe.eval(COMPARE_AND_DELETE, 1, 'lock:job', token)).toBe(1);
      // Freed by its client at once, not after its lease: the waiter polls it in.
      const startedAt = performance.now();
      const lock = await waiting;
      expect(performance.now() - startedAt).toBeLessThan(2_000);
      await lock.release();
      await settled();
    });

    it("canary: a value of the library's own form (another process of it) is marked", async () => {
      const holder = proc('holder');
      const waiter = proc('waiter', { pollCap: LONG });
      const lock = await holder.engine.acquire('job', { ttl: LONG });
      const waiting = waiter.engine.acquire('job', { ttl: LONG, wait: WAIT });
      await inLine(waiter);

      expect(await redis.probe.get('lock:job')).toBe(lock.token + WAITERS_MARK);
      // The mark breaks a plain compare: why it must never be written on another's value.
      expect(await redis.probe.eval(COMPARE_AND_DELETE, 1, 'lock:job', lock.token)).toBe(0);
      await lock.release();
      await (await waiting).release();
      await settled();
    });
  });
});
