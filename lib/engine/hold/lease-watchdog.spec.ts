import { jest } from '@jest/globals';
import type { LockLossReason } from '../../errors/lock.errors.js';
import type { LeaseExtension } from '../../stores/lock-store.interface.js';
import { LeaseWatchdog } from './lease-watchdog.js';
import type { WatchedLease } from './watched-lease.js';

interface Round {
  readonly at: number;
  readonly keys: readonly string[];
}

describe('LeaseWatchdog rounds', () => {
  let rounds: Round[];
  let lost: [string, LockLossReason][];
  let watchdog: LeaseWatchdog;

  function lease(key: string, ttl: number, autoRenew = true): WatchedLease {
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

  function watch(key: string, ttl: number, autoRenew = true): void {
    watchdog.add(lease(key, ttl, autoRenew));
  }

  beforeEach(() => {
    // performance.now() is faked with the timers: rounds happen at exact fake times.
    jest.useFakeTimers();
    rounds = [];
    lost = [];
    watchdog = new LeaseWatchdog({
      extend: (leases: readonly LeaseExtension[]) => {
        rounds.push({ at: performance.now(), keys: leases.map((one) => one.keys[0]) });
        return Promise.resolve(leases.map(() => 'extended' as const));
      },
      renewed: () => undefined,
      lost: (gone, reason) => void lost.push([gone.fullKeys[0], reason]),
      failed: () => undefined,
      leaseEnd: (sentAt, ttl) => sentAt + ttl,
    });
  });

  afterEach(() => {
    watchdog.stop();
    jest.useRealTimers();
  });

  it('renews a lease taken just before a round in that round, not in a call of its own', async () => {
    watch('a', 3_000);
    await jest.advanceTimersByTimeAsync(900);
    watch('b', 3_000);
    await jest.advanceTimersByTimeAsync(1_100);

    expect(rounds).toEqual([
      { at: 1_000, keys: ['a', 'b'] },
      { at: 2_000, keys: ['a', 'b'] },
    ]);
  });

  it('keeps to one call per interval while new leases arrive all the time', async () => {
    // A lease every 100 ms for 10 s, all held: with a 1 s interval, 10 rounds at most.
    for (let i = 0; i < 100; i++) {
      watch(`k${i}`, 3_000);
      await jest.advanceTimersByTimeAsync(100);
    }

    expect(rounds.length).toBeLessThanOrEqual(10);
    expect(rounds.at(-1)!.keys).toHaveLength(100);
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

  it('keeps every other lease when leases leave in any order, and a moved one stays put', async () => {
    const leases = Array.from({ length: 20 }, (_, i) => lease(`k${i}`, 3_000));
    leases.forEach((one) => watchdog.add(one));
    // Out of order, the last one among them: each leaving lease swaps another into its slot.
    for (const i of [3, 19, 0, 7, 8, 12]) watchdog.delete(leases[i]);
    watchdog.delete(leases[3]);
    const moved = lease('moved', 3_000);
    watchdog.transfer(leases[5], moved);
    const kept = [
      'k1',
      'k2',
      'k4',
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

    expect(watchdog.size).toBe(kept.length + 1);
    expect(new Set(watchdog.leases().map((one) => one.fullKeys[0]))).toEqual(
      new Set([...kept, 'moved']),
    );
    await jest.advanceTimersByTimeAsync(1_000);
    expect(rounds).toHaveLength(1);
    expect([...rounds[0].keys].sort()).toEqual([...kept, 'moved'].sort());
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
