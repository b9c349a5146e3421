import { jest } from '@jest/globals';
import type { LockLossReason } from '../../errors/lock.errors.js';
import type { LeaseExtension } from '../../stores/lock-store.interface.js';
import { LeaseWatchdog } from './lease-watchdog.js';
import { CALL_SLICE, CALLS_IN_FLIGHT } from './renewal-line.js';
import { PUSH_SLICE, TASK_SLICE, type WatchedLease } from './watched-lease.js';
import { THROUGHPUT_MEMORY } from './renewal-throughput.js';

interface Round {
  readonly at: number;
  readonly keys: readonly string[];
}

/** A mutex lease of `ttl` ms taken now (fake time). */
function lease(key: string, ttl = 3_000, autoRenew = true): WatchedLease {
  const now = performance.now();
  return {
    fullKeys: [key],
    token: key,
    kind: { type: 'mutex' },
    ttl,
    autoRenew,
    expiresAt: now + ttl,
    holdUntil: Infinity,
  };
}

/** A watchdog whose renewals go to `extend`, recording the leases it declares lost. */
function watchdogWith(
  extend: (leases: readonly LeaseExtension[]) => Promise<'extended'[]>,
  lost: [string, LockLossReason][],
): LeaseWatchdog {
  return new LeaseWatchdog({
    extend,
    renewed: () => undefined,
    lost: (gone, reason) => void lost.push([gone.fullKeys[0], reason]),
    leaseEnd: (sentAt, ttl) => sentAt + ttl,
  });
}

describe('LeaseWatchdog rounds', () => {
  let rounds: Round[];
  let lost: [string, LockLossReason][];
  let watchdog: LeaseWatchdog;

  function watch(key: string, ttl: number, autoRenew = true): void {
    watchdog.add(lease(key, ttl, autoRenew));
  }

  beforeEach(() => {
    // performance.now() is faked with the timers: rounds happen at exact fake times.
    jest.useFakeTimers();
    rounds = [];
    lost = [];
    watchdog = watchdogWith((leases) => {
      rounds.push({ at: performance.now(), keys: leases.map((one) => one.keys[0]) });
      return Promise.resolve(leases.map(() => 'extended' as const));
    }, lost);
  });

  afterEach(() => {
    watchdog.stop();
    jest.useRealTimers();
  });

  it('renews a lease with those due up to a quarter of its interval before it, and no earlier', async () => {
    watch('a', 3_000);
    await jest.advanceTimersByTimeAsync(200);
    watch('b', 3_000); // due at 1,200: within 250 ms of a's 1,000
    await jest.advanceTimersByTimeAsync(300);
    watch('c', 3_000); // due at 1,500: too late for a's call
    await jest.advanceTimersByTimeAsync(1_100);

    expect(rounds).toEqual([
      { at: 1_000, keys: ['a', 'b'] },
      { at: 1_500, keys: ['c'] },
    ]);
  });

  it(`takes the leases due at once ${TASK_SLICE} per task, and renews them in calls of at most ${CALL_SLICE}`, async () => {
    const many = TASK_SLICE + 20;
    for (let i = 0; i < many; i++) watch(`k${i}`, 3_000);
    await jest.advanceTimersByTimeAsync(1_000);
    const firstTask = rounds.map((round) => round.keys.length);
    // The leases after the first task's are taken in the task that follows.
    await jest.advanceTimersByTimeAsync(1);

    expect(firstTask).toEqual(Array<number>(TASK_SLICE / CALL_SLICE).fill(CALL_SLICE));
    expect(rounds.map((round) => round.keys.length).slice(firstTask.length)).toEqual([20]);
    expect(new Set(rounds.flatMap((round) => round.keys)).size).toBe(many);
    expect(lost).toEqual([]);
  });

  it('never renews a lease released before the next tick, and renews those added beside it', async () => {
    const leases = ['a', 'b', 'c', 'd', 'e'].map((key) => lease(key));
    for (const one of leases) watchdog.add(one);
    watchdog.delete(leases[1]);
    watchdog.delete(leases[3]);
    expect(watchdog.size).toBe(3);
    await jest.advanceTimersByTimeAsync(1_000);

    expect(rounds.flatMap((round) => round.keys).sort()).toEqual(['a', 'c', 'e']);
    expect(
      watchdog
        .leases()
        .map((one) => one.token)
        .sort(),
    ).toEqual(['a', 'c', 'e']);
  });

  it(`renews every lease of a burst larger than one task admits (${PUSH_SLICE})`, async () => {
    for (let i = 0; i < PUSH_SLICE + 10; i++) watch(`k${i}`, 3_000);
    await jest.advanceTimersByTimeAsync(1_010);

    expect(new Set(rounds.flatMap((round) => round.keys)).size).toBe(PUSH_SLICE + 10);
    expect(lost).toEqual([]);
  });

  it('shortens the deadline of a lease not yet ticked at once, when a shorter lease is sent', async () => {
    const short = lease('short', 3_000, false);
    watchdog.add(short);
    watchdog.extending(short, performance.now(), 100);
    await jest.advanceTimersByTimeAsync(100);

    expect(lost).toEqual([['short', 'expired']]);
  });

  it('keeps one timer however many tasks a burst of due leases takes', async () => {
    for (let i = 0; i < 8 * TASK_SLICE; i++) watch(`k${i}`, 3_000);
    await jest.advanceTimersByTimeAsync(1_000);
    for (let task = 0; task < 8; task++) await jest.advanceTimersByTimeAsync(1);

    expect(rounds.flatMap((round) => round.keys)).toHaveLength(8 * TASK_SLICE);
    expect(jest.getTimerCount()).toBe(1);
  });

  it('keeps every lease of a long burst renewed, each on its own schedule', async () => {
    // A lease every 100 ms for 10 s, all held.
    for (let i = 0; i < 100; i++) {
      watch(`k${i}`, 3_000);
      await jest.advanceTimersByTimeAsync(100);
    }

    // Lease i came at 100·i ms and is renewed every 1 s from then, up to 250 ms early.
    const renewals = rounds.flatMap((round) => round.keys);
    expect(new Set(renewals).size).toBeGreaterThanOrEqual(91);
    // Each renewal is at most 250 ms early, so no lease is renewed more than once a 750 ms.
    expect(renewals.filter((key) => key === 'k0').length).toBeLessThanOrEqual(13);
    expect(rounds.length).toBeLessThan(renewals.length / 2);
    expect(lost).toEqual([]);
  });

  it('does not sweep a long lease into the rounds of short ones', async () => {
    watch('short', 3_000);
    watch('long', 60_000);
    await jest.advanceTimersByTimeAsync(10_000);

    expect(rounds).toHaveLength(10);
    expect(rounds.filter((round) => round.keys.includes('long'))).toEqual([]);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(rounds.filter((round) => round.keys.includes('long'))).toHaveLength(1);
  });

  it('keeps every other lease when leases leave in any order', async () => {
    const leases = Array.from({ length: 20 }, (_, i) => lease(`k${i}`, 3_000));
    leases.forEach((one) => watchdog.add(one));
    // Out of order, the last one among them: each leaving lease swaps another into its slot.
    for (const i of [3, 19, 0, 7, 8, 12]) watchdog.delete(leases[i]);
    watchdog.delete(leases[3]);
    const kept = [
      'k1',
      'k2',
      'k4',
      'k5',
      'k6',
      'k9',
      'k10',
      'k11',
      'k13',
      'k14',
      'k15',
      'k16',
      'k17',
      'k18',
    ];

    expect(watchdog.size).toBe(kept.length);
    expect(new Set(watchdog.leases().map((one) => one.fullKeys[0]))).toEqual(new Set(kept));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(rounds).toHaveLength(1);
    expect([...rounds[0].keys].sort()).toEqual([...kept].sort());
    expect(lost).toEqual([]);
  });

  it('renews nothing when the timer fires for a deadline alone', async () => {
    watch('renewed', 3_000);
    watch('unrenewed', 500, false);
    await jest.advanceTimersByTimeAsync(600);

    expect(lost).toEqual([['unrenewed', 'expired']]);
    expect(rounds).toEqual([]);
    await jest.advanceTimersByTimeAsync(400);
    expect(rounds).toEqual([{ at: 1_000, keys: ['renewed'] }]);
  });
});

describe('LeaseWatchdog calls in flight', () => {
  let answers: ((result: 'extended') => void)[];
  let lost: [string, LockLossReason][];
  let watchdog: LeaseWatchdog;

  /** Answers every renewal call out now, each lease 'extended'. */
  function answerAll(): void {
    for (const answer of answers.splice(0)) answer('extended');
  }

  beforeEach(() => {
    jest.useFakeTimers();
    answers = [];
    lost = [];
    watchdog = watchdogWith(
      (leases) =>
        new Promise((resolve) => answers.push((result) => resolve(leases.map(() => result)))),
      lost,
    );
  });

  afterEach(() => {
    watchdog.stop();
    jest.useRealTimers();
  });

  it('keeps at most CALLS_IN_FLIGHT calls out, and sends the leases in line as they come back', async () => {
    const count = (CALLS_IN_FLIGHT + 2) * CALL_SLICE;
    for (let i = 0; i < count; i++) watchdog.add(lease(`k${i}`));
    await jest.advanceTimersByTimeAsync(1_000);
    await jest.advanceTimersByTimeAsync(1); // the task after the first takes the rest
    expect(answers).toHaveLength(CALLS_IN_FLIGHT);
    answerAll();
    await jest.advanceTimersByTimeAsync(0);
    expect(answers).toHaveLength(2);
    answerAll();
    await jest.advanceTimersByTimeAsync(0);
    expect(answers).toHaveLength(0);
    expect(lost).toEqual([]);
  });

  it('sends a lease in line when a third of its ttl is left, calls out or not, and ends it at its deadline unanswered', async () => {
    const count = (CALLS_IN_FLIGHT + 2) * CALL_SLICE;
    for (let i = 0; i < count; i++) watchdog.add(lease(`k${i}`));
    await jest.advanceTimersByTimeAsync(1_999);
    expect(answers).toHaveLength(CALLS_IN_FLIGHT);
    await jest.advanceTimersByTimeAsync(1);
    expect(answers).toHaveLength(CALLS_IN_FLIGHT + 2);
    expect(lost).toEqual([]);
    await jest.advanceTimersByTimeAsync(1_000);
    await jest.advanceTimersByTimeAsync(1); // the task after the first takes the rest
    expect(lost).toHaveLength(count);
    expect(new Set(lost.map(([, reason]) => reason))).toEqual(new Set(['unreachable']));
  });

  it(`ends every lease past its deadline in the task that finds them, ${3 * TASK_SLICE} at once`, async () => {
    const count = 3 * TASK_SLICE;
    for (let i = 0; i < count; i++) watchdog.add(lease(`k${i}`, 1_000, false));
    await jest.advanceTimersByTimeAsync(1_000);
    // No task after the first: every loss was told in it.
    expect(lost).toHaveLength(count);
    expect(watchdog.size).toBe(0);
  });

  it("ends an overdue lease when its holder asks, before the watchdog's tick", () => {
    const overdue = lease('overdue', 1_000, false);
    watchdog.add(overdue);
    expect(watchdog.loseIfOverdue(overdue)).toBe(false);
    // The clock moves on without the timers running: an event loop too busy to tick.
    const later = performance.now() + 1_000;
    expect(watchdog.loseIfOverdue(overdue, later)).toBe(true);
    expect(lost).toEqual([['overdue', 'expired']]);
    expect(watchdog.size).toBe(0);
    expect(watchdog.loseIfOverdue(overdue, later)).toBe(false);
  });

  it('tells a renewal that finds the key gone as vanished, and another owner as stolen', async () => {
    const gone = watchdogWith(
      (leases) =>
        Promise.resolve(leases.map((one) => (one.keys[0] === 'a' ? 'expired' : 'stolen')) as never),
      lost,
    );
    gone.add(lease('a'));
    gone.add(lease('b'));
    await jest.advanceTimersByTimeAsync(1_000);
    gone.stop();
    expect(lost.sort()).toEqual([
      ['a', 'vanished'],
      ['b', 'stolen'],
    ]);
  });

  it('ends a lease at maxHold as max-hold, even with its last clipped renewal still out', async () => {
    watchdog.add({ ...lease('held'), holdUntil: 1_200 });
    await jest.advanceTimersByTimeAsync(1_000);
    expect(answers).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(2_000);
    expect(lost).toEqual([['held', 'max-hold']]);
  });
});

describe('LeaseWatchdog admission of new leases', () => {
  const watchdog = watchdogWith(() => new Promise(() => undefined), []);
  afterAll(() => watchdog.stop());

  it('counts the renewals a second its auto-renewed leases ask for', () => {
    const short = lease('short', 300);
    watchdog.add(short);
    watchdog.add(lease('long', 3_000));
    watchdog.add(lease('unrenewed', 300, false));
    expect(watchdog.demand).toBeCloseTo(10 + 1);
    watchdog.delete(short);
    expect(watchdog.demand).toBeCloseTo(1);
  });

  it('admits any lease until renewal has fallen behind, then only what fits the rate measured', () => {
    expect(watchdog.fits(1)).toBe(true);
    const { throughput } = watchdog;
    throughput.lineWaiting(true, 0);
    throughput.answered(10, 1_000); // 10 a second, of which 8 may be asked
    // A lease of ttl T asks for 3,000 / T renewals a second.
    expect(watchdog.fits(3_000 / 6.9, 1_000)).toBe(true); // 1 + 6.9 a second
    expect(watchdog.fits(3_000 / 7.1, 1_000)).toBe(false); // 1 + 7.1 a second
    expect(watchdog.fits(3_000 / 7.1, 1_000 + 10 * THROUGHPUT_MEMORY)).toBe(false); // still full
    throughput.lineWaiting(false, 1_000);
    expect(watchdog.fits(3_000 / 7.1, 1_000 + THROUGHPUT_MEMORY)).toBe(true); // caught up since
  });
});

describe('LeaseWatchdog on real timers, with no I/O to wake the event loop', () => {
  /**
   * Adds `count` leases of `ttl` ms, all with one deadline; resolves once renewal or loss has
   * seen every one (or after 2 s), with how late the last was seen: after the last lease added
   * was due for renewal, or after the deadline.
   */
  async function seeAll(
    count: number,
    ttl: number,
    autoRenew: boolean,
  ): Promise<{ seen: number; lateMs: number }> {
    const seen = new Set<string>();
    let last = 0;
    let allSeen!: () => void;
    const done = new Promise<void>((resolve) => (allSeen = resolve));
    const see = (key: string): void => {
      last = performance.now();
      seen.add(key);
      if (seen.size === count) allSeen();
    };
    const watchdog = new LeaseWatchdog({
      extend: (leases) => {
        leases.forEach((one) => see(one.keys[0]));
        return Promise.resolve(leases.map(() => 'extended' as const));
      },
      renewed: () => undefined,
      lost: (gone) => see(gone.fullKeys[0]),
      leaseEnd: (sentAt, ttlSent) => sentAt + ttlSent,
    });
    const expiresAt = performance.now() + ttl;
    for (let i = 0; i < count; i++) watchdog.add({ ...lease(`k${i}`, ttl, autoRenew), expiresAt });
    const due = autoRenew ? performance.now() + ttl / 3 : expiresAt;
    let bound: NodeJS.Timeout | undefined;
    // The only other timer: a stalled watchdog would wait for it, or for some stray wake-up.
    await Promise.race([done, new Promise((resolve) => (bound = setTimeout(resolve, 2_000)))]);
    clearTimeout(bound);
    watchdog.stop();
    return { seen: seen.size, lateMs: last - due };
  }

  // Each slice takes its own task, and the next must follow at once, not at the next I/O or
  // timer: with nothing else in flight, a stalled watchdog waits for the 2 s bound.
  it(`ends ${3 * TASK_SLICE} leases that run out together in consecutive tasks`, async () => {
    const { seen, lateMs } = await seeAll(3 * TASK_SLICE, 50, false);

    expect(seen).toBe(3 * TASK_SLICE);
    expect(lateMs).toBeLessThan(250);
  });

  it(`renews ${2 * PUSH_SLICE + 10} new leases, pushed into the heap over consecutive tasks`, async () => {
    const { seen, lateMs } = await seeAll(2 * PUSH_SLICE + 10, 300, true);

    expect(seen).toBe(2 * PUSH_SLICE + 10);
    expect(lateMs).toBeLessThan(250);
  });
});
