import { EXTEND_SLICE } from '../../lib/stores/redis/lease-renewal.js';
import { leaseMargin } from '../../lib/engine/request/lock-request.js';
import { LockLostError } from '../../lib/errors/lock.errors.js';
import { EXTEND } from '../../lib/stores/redis/scripts/release.scripts.js';
import { useRedisServer, useTestEngine } from '../harness/use-redis.js';
import { abortTime, waitUntil, within } from '../harness/waits.js';
import { commandCalls } from '../harness/command-stats.js';
import { figure } from '../harness/figures.js';
import { loopLag } from '../harness/loop-lag.js';
import { recordEvents } from '../harness/engine-events.js';

const TTL = 300;
const RENEW_INTERVAL = TTL / 3;
// Room for a round trip and timer slack; each test adds the event-loop lag it measured.
const MARGIN = 60;
// A lease's end is noticed by a timer alone, with no renewal due before it: on a loaded machine
// that timer can fire later than the loop lag shows (a CI run saw 148 ms with 87 ms of lag).
// Still well short of the extra second the test gives the abort before it fails.
const LEASE_END_MARGIN = 250;

describe('lease renewal', () => {
  const redis = useRedisServer();
  const fixture = useTestEngine(redis);

  it('keeps a 300 ms lease alive for 3 s without a gap', async () => {
    const recorder = recordEvents(fixture.engine);
    const lock = await fixture.engine.acquire('k', { ttl: TTL });

    let minPttl = Infinity;
    let samples = 0;
    const end = performance.now() + 3_000;
    while (performance.now() < end) {
      const [[, value], [, pttl]] = (await redis.probe
        .pipeline()
        .get('lock:k')
        .pttl('lock:k')
        .exec())!;
      expect(value).toBe(lock.token);
      minPttl = Math.min(minPttl, pttl as number);
      samples++;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    recorder.stop();

    const renewals = recorder.events.filter(
      (event) => event.type === 'renewed' && event.key === 'k',
    );
    figure('renewal: min PTTL over 3 s (ms)', minPttl);
    figure('renewal: renewals in 3 s', renewals.length);
    figure('renewal: PTTL samples', samples);
    expect(lock.signal.aborted).toBe(false);
    expect(lock.isHeld).toBe(true);
    expect(minPttl).toBeGreaterThan(0);
    // One every ttl/3 would be 30; half of that still proves renewal never stalled for long.
    expect(renewals.length).toBeGreaterThanOrEqual(15);
    expect(recorder.events.some((event) => event.type === 'lost' || event.type === 'expired')).toBe(
      false,
    );
    expect(await lock.release()).toBe('released');
  });

  it('notices a key deleted behind its back within one renewal interval', async () => {
    const recorder = recordEvents(fixture.engine);
    const lock = await fixture.engine.acquire('k', { ttl: TTL });
    // Start from a steady renewal rhythm rather than from the acquire.
    await waitUntil('a first renewal', () =>
      recorder.events.some((event) => event.type === 'renewed'),
    );
    const aborted = abortTime(lock.signal);

    const lag = loopLag();
    const deletedAt = performance.now();
    expect(await redis.probe.del('lock:k')).toBe(1);
    const abortedAt = await within('the abort after DEL', aborted, 2_000);
    const slack = lag.stop();
    recorder.stop();

    figure('renewal: DEL -> abort (ms)', abortedAt - deletedAt);
    figure('renewal: event-loop lag meanwhile (ms)', slack);
    expect(abortedAt - deletedAt).toBeLessThanOrEqual(RENEW_INTERVAL + MARGIN + slack);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect(lock.signal.reason).toMatchObject({ key: 'k', reason: 'vanished' });
    expect(lock.isHeld).toBe(false);
    expect(recorder.events).toContainEqual(
      expect.objectContaining({ type: 'lost', key: 'k', reason: 'vanished' }),
    );
    // Renewal must not bring the key back.
    expect(await redis.probe.exists('lock:k')).toBe(0);
  });

  it('reports a key overwritten by another owner as stolen and leaves it alone', async () => {
    const lock = await fixture.engine.acquire('k', { ttl: TTL });
    const aborted = abortTime(lock.signal);

    const lag = loopLag();
    const stolenAt = performance.now();
    await redis.probe.set('lock:k', 'intruder', 'PX', 10_000);
    const abortedAt = await within('the abort after the overwrite', aborted, 2_000);
    const slack = lag.stop();

    figure('renewal: overwrite -> abort (ms)', abortedAt - stolenAt);
    expect(abortedAt - stolenAt).toBeLessThanOrEqual(RENEW_INTERVAL + MARGIN + slack);
    expect(lock.signal.reason).toMatchObject({ name: 'LockLostError', reason: 'stolen' });
    expect(await redis.probe.get('lock:k')).toBe('intruder');
    expect(await redis.probe.pttl('lock:k')).toBeGreaterThan(9_000);
  });

  it('ends a lost lock once in events$: its release afterwards emits no second end', async () => {
    const recorder = recordEvents(fixture.engine);
    const lock = await fixture.engine.acquire('k', { ttl: TTL });
    const aborted = abortTime(lock.signal);
    await redis.probe.set('lock:k', 'intruder', 'PX', 10_000);
    await within('the abort after the overwrite', aborted, 2_000);

    expect(await lock.release()).toBe('stolen');
    recorder.stop();
    const ends = recorder.events.filter(
      (event) => ['released', 'lost', 'expired'].includes(event.type) && event.key === 'k',
    );
    expect(ends).toEqual([expect.objectContaining({ type: 'lost', reason: 'stolen' })]);
    expect(await redis.probe.get('lock:k')).toBe('intruder');
  });

  it('stops renewing at maxHold: the signal aborts with max-hold and the key expires', async () => {
    const maxHold = 1_000;
    const recorder = recordEvents(fixture.engine);
    const lag = loopLag();
    const calledAt = performance.now();
    const lock = await fixture.engine.acquire('k', { ttl: TTL, maxHold });
    const abortedAt = await within('the max-hold abort', abortTime(lock.signal), maxHold + 1_000);
    const gone: number = await waitUntil('the key to expire', async () =>
      (await redis.probe.exists('lock:k')) === 0 ? performance.now() : undefined,
    );
    const slack = lag.stop();
    recorder.stop();

    figure('renewal: maxHold 1000 -> abort after (ms)', abortedAt - calledAt);
    figure('renewal: abort -> key gone (ms)', gone - abortedAt);
    // The hold is counted from when the acquire was sent, which is after `calledAt`, and ends
    // its lease's margin before `maxHold`, when the last lease sent could end in Redis.
    expect(abortedAt - calledAt).toBeGreaterThanOrEqual(maxHold - leaseMargin(TTL));
    expect(abortedAt - calledAt).toBeLessThanOrEqual(maxHold + MARGIN + slack);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect(lock.signal.reason).toMatchObject({ reason: 'max-hold' });
    // Renewal kept it past its first ttl, then the last renewals were clipped to maxHold.
    expect(
      recorder.events.filter((event) => event.type === 'renewed').length,
    ).toBeGreaterThanOrEqual(5);
    expect(gone - abortedAt).toBeLessThanOrEqual(MARGIN + slack);
    expect(recorder.events).toContainEqual(
      expect.objectContaining({ type: 'lost', reason: 'max-hold' }),
    );
  });

  it("lets a lock without autoRenew run out: expired event and aborted signal at its lease's local deadline", async () => {
    const recorder = recordEvents(fixture.engine);
    const lag = loopLag();
    const calledAt = performance.now();
    const lock = await fixture.engine.acquire('k', { ttl: TTL, autoRenew: false });
    const abortedAt = await within('the lease-end abort', abortTime(lock.signal), TTL + 1_000);
    const slack = lag.stop();
    await waitUntil('the key to expire', async () => (await redis.probe.exists('lock:k')) === 0);
    recorder.stop();

    figure('renewal: autoRenew false, ttl 300 -> abort after (ms)', abortedAt - calledAt);
    expect(abortedAt - calledAt).toBeGreaterThanOrEqual(TTL - leaseMargin(TTL));
    expect(abortedAt - calledAt).toBeLessThanOrEqual(TTL + LEASE_END_MARGIN + slack);
    expect(lock.signal.reason).toMatchObject({ name: 'LockLostError', reason: 'expired' });
    const types = recorder.events.map((event) => event.type);
    expect(types).toContain('expired');
    expect(types).not.toContain('renewed');
    expect(types).not.toContain('lost');
  });

  it('renews many locks taken together in shared EXTEND calls, not one per lock', async () => {
    const count = 200;
    // A lease is renewed up to a quarter of its interval early, with those due just before
    // it: 75 ms leaves room for the 200 acquires to straggle on a loaded machine.
    const ttl = 900;
    // Load EXTEND first: a NOSCRIPT miss would count as an extra EVALSHA in the window.
    await redis.probe.script('LOAD', EXTEND.body);
    const locks = await Promise.all(
      Array.from({ length: count }, (_, i) => fixture.engine.acquire(`batch:${i}`, { ttl })),
    );

    const recorder = recordEvents(fixture.engine);
    const before = await commandCalls(redis.probe);
    await waitUntil(
      'five renewals of every lock',
      () => recorder.events.filter((event) => event.type === 'renewed').length >= count * 5,
      10_000,
    );
    const after = await commandCalls(redis.probe);
    recorder.stop();

    const renewed = recorder.events.filter((event) => event.type === 'renewed').length;
    const evalsha = (after.get('evalsha') ?? 0) - (before.get('evalsha') ?? 0);
    const eval_ = (after.get('eval') ?? 0) - (before.get('eval') ?? 0);
    figure('batching: renewals observed', renewed);
    figure('batching: EVALSHA calls for them', evalsha);
    expect(eval_).toBe(0);
    expect(evalsha).toBeGreaterThanOrEqual(5);
    // About one call per round of `count` renewals (two where the acquires straggled past the
    // quarter interval), each cut into EXTEND commands of EXTEND_SLICE keys; +2 for a call that
    // ran but whose reply (and events) had not arrived when a snapshot was taken.
    const perCall = Math.ceil(count / EXTEND_SLICE);
    expect(evalsha).toBeLessThanOrEqual(perCall * (2 * Math.ceil(renewed / count) + 2));
    expect(locks.every((lock) => !lock.signal.aborted)).toBe(true);
    const values = await redis.probe.mget(locks.map((_, i) => `lock:batch:${i}`));
    expect(values).toEqual(locks.map((lock) => lock.token));
  });
});
