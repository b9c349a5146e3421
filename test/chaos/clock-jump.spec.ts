import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockBusyError } from '../../lib/errors/lock.errors.js';
import { reportFigures } from '../harness/figures.js';
import { later } from '../harness/handled-later.js';
import { createTestEngine } from '../harness/test-engine.js';
import { useRedisServer, useTestEngine } from '../harness/use-redis.js';
import { outcome, waitUntil, within } from '../harness/waits.js';
import { loopLag } from '../harness/loop-lag.js';
import { nextEvent, recordEvents } from '../harness/engine-events.js';
import { useJumpingClock } from '../harness/jumping-clock.js';
import { NaiveLock } from '../harness/naive-lock.js';

const TTL = 600;
const HOURS = 60 * 60 * 1000;
const SHORT_WAIT = 300;
// Timer slack plus a round trip; each test adds the event-loop lag it measured.
const MARGIN = 100;

const JUMPS = [
  { direction: 'forward', ms: 3 * HOURS },
  { direction: 'backward', ms: -3 * HOURS },
];

describe('the wall clock (Date.now) jumps by hours', () => {
  const redis = useRedisServer();
  const fixture = useTestEngine(redis);
  const clock = useJumpingClock();
  // Another process's engine, on a connection of its own: it waits through Redis, not in memory.
  let rivals: LockEngine;

  beforeEach(() => {
    rivals = createTestEngine(redis.connect());
  });

  afterEach(async () => {
    await rivals.close();
  });

  describe.each(JUMPS)('$direction', ({ direction, ms }) => {
    it('leaves a held lock held, and its key renewed', async () => {
      const { engine } = fixture;
      const recorder = recordEvents(engine);
      const lock = await engine.acquire('held', { ttl: TTL });

      clock.jump(ms);
      const pttls: number[] = [];
      // Three renewals span a whole ttl: the key would be gone had renewal stopped.
      await waitUntil(
        'three renewals after the jump',
        async () => {
          pttls.push(await redis.probe.pttl('lock:held'));
          return recorder.events.filter((event) => event.type === 'renewed').length >= 3;
        },
        TTL * 4,
        5,
      );
      recorder.stop();

      expect(Math.min(...pttls)).toBeGreaterThan(0);
      expect(lock.isHeld).toBe(true);
      expect(lock.signal.aborted).toBe(false);
      expect(lock.remainingTime()).toBeGreaterThan(0);
      expect(lock.remainingTime()).toBeLessThanOrEqual(TTL);
      expect(await redis.probe.get('lock:held')).toBe(lock.token);
      expect(await lock.release()).toBe('released');
    });

    it('still hands the lock to a waiter (wait 2000) when the holder releases', async () => {
      const holder = await fixture.engine.acquire('handoff', { ttl: 5_000 });
      const busy = later(nextEvent(rivals, 'contended', 'handoff'));
      const waiting = outcome(rivals.acquire('handoff', { ttl: TTL, wait: 2_000 }));
      await busy;

      clock.jump(ms);
      const releasedAt = performance.now();
      expect(await holder.release()).toBe('released');
      const { value: lock, error, at } = await waiting;

      reportFigures(`clock jump ${direction}: release -> waiter holds (ms)`, {
        ms: Math.round(at - releasedAt),
      });
      expect(error).toBeUndefined();
      expect(lock!.isHeld).toBe(true);
      expect(await redis.probe.get('lock:handoff')).toBe(lock!.token);
      await lock!.release();
    });

    it(`still fails a wait of ${SHORT_WAIT} ms on a held key after ${SHORT_WAIT} ms`, async () => {
      const holder = await fixture.engine.acquire('busy', { ttl: 5_000 });
      const busy = later(nextEvent(rivals, 'contended', 'busy'));
      const lag = loopLag();
      const startedAt = performance.now();
      const waiting = outcome(rivals.acquire('busy', { wait: SHORT_WAIT }));
      await busy;

      clock.jump(ms);
      // A deadline kept by the wall clock would end at once (forward) or never (backward).
      const { error, at } = await within('the wait to end', waiting, SHORT_WAIT * 10);
      const slack = lag.stop();

      reportFigures(`clock jump ${direction}: wait ${SHORT_WAIT} ended after (ms)`, {
        ms: Math.round(at - startedAt),
      });
      expect(error).toBeInstanceOf(LockBusyError);
      // Node may fire a timer up to a millisecond early.
      expect(at - startedAt).toBeGreaterThanOrEqual(SHORT_WAIT - 2);
      expect(at - startedAt).toBeLessThanOrEqual(SHORT_WAIT + MARGIN + slack);
      expect(await holder.release()).toBe('released');
    });
  });

  // Canaries: the same jumps fool a lease judged by the wall clock, so they do reach the code.
  it('canary: after a forward jump, a Date.now() lease check gives up a key it still holds', async () => {
    const naive = await NaiveLock.take(redis.client, 'lock:naive', 'me', TTL);
    expect(naive!.believesHeld()).toBe(true);

    clock.jump(3 * HOURS);

    expect(naive!.believesHeld()).toBe(false);
    expect(await naive!.heldInRedis(redis.probe)).toBe(true);
    expect(await redis.probe.pttl('lock:naive')).toBeGreaterThan(0);
  });

  it('canary: after a backward jump, a Date.now() lease check keeps a key long expired', async () => {
    const naive = await NaiveLock.take(redis.client, 'lock:naive', 'me', TTL);

    clock.jump(-3 * HOURS);
    await waitUntil(
      'the naive key to expire in Redis',
      async () => (await redis.probe.exists('lock:naive')) === 0,
      TTL * 4,
      5,
    );

    expect(naive!.believesHeld()).toBe(true);
    expect(await naive!.heldInRedis(redis.probe)).toBe(false);
  });
});
