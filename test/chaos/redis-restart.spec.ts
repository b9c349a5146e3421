import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { reportFigures } from '../harness/figures.js';
import { later } from '../harness/handled-later.js';
import { createTestEngine } from '../harness/test-engine.js';
import { useRedisServer } from '../harness/use-redis.js';
import { abortTime, within } from '../harness/waits.js';
import { loopLag } from '../harness/loop-lag.js';
import { nextEvent, recordEvents } from '../harness/engine-events.js';
import { expectLostKeyGone } from '../harness/lost-lock.js';
import { CHAOS, timeoutFor } from '../harness/chaos-profile.js';
import { NaiveLock } from '../harness/naive-lock.js';

const TTL = 900;
const RENEW_INTERVAL = TTL / 3;
// ioredis reconnects with a back-off of 50 ms, 100 ms, ... after the old server dies; the next
// renewal can only go out once it is connected. Plus a round trip and timer slack.
const MARGIN = 250;

describe('Redis restarted without persistence while a lock is held', () => {
  const redis = useRedisServer();

  /**
   * Another process's engine, on a connection of its own that the test uses after the last
   * restart and then closes: a connection left reconnecting would hold Jest's exit up for
   * ioredis' 2 s disconnect timer.
   */
  async function withRivals(use: (rivals: LockEngine) => Promise<void>): Promise<void> {
    const connection = redis.server.client();
    const rivals = createTestEngine(connection);
    try {
      await use(rivals);
    } finally {
      await rivals.close();
      connection.disconnect();
    }
  }

  async function restartUnderHolder(engine: LockEngine, key: string): Promise<void> {
    const recorder = recordEvents(engine);
    const renewed = later(nextEvent(engine, 'renewed', key));
    const lock = await engine.acquire(key, { ttl: TTL });
    // From a steady renewal rhythm, not from the acquire.
    await renewed;
    const aborted = abortTime(lock.signal);
    const lag = loopLag();

    await redis.server.restart();
    const backAt = performance.now();
    const abortedAt = await within('the abort after the restart', aborted, TTL * 3);
    const slack = lag.stop();
    recorder.stop();

    reportFigures('redis restart: Redis back -> abort', {
      ms: Math.round(abortedAt - backAt),
      bound: RENEW_INTERVAL + MARGIN + Math.round(slack),
    });
    expect(abortedAt - backAt).toBeLessThanOrEqual(RENEW_INTERVAL + MARGIN + slack);
    // The restarted server has no key at all: gone, not taken by someone else.
    await expectLostKeyGone(lock, key, recorder.events, redis.probe);
  }

  it(
    'aborts the holder (LockLostError) within one renewal interval of Redis coming back',
    async () => {
      const engine = createTestEngine(redis.client);
      try {
        for (let round = 0; round < CHAOS.rounds; round++) {
          await restartUnderHolder(engine, `restart:${round}`);
        }
      } finally {
        await engine.close();
      }
      // The key is free for the next holder.
      await withRivals(async (rivals) => {
        const next = await rivals.tryAcquire(`restart:${CHAOS.rounds - 1}`, { ttl: TTL });
        expect(next?.isHeld).toBe(true);
      });
    },
    timeoutFor(5_000),
  );

  // Canary: without renewal or signal, the restart hands the key to a second holder while the
  // first still believes it holds it.
  it('canary: a naive holder (SET NX PX, no renewal) shares the key after the restart', async () => {
    const naive = await NaiveLock.take(redis.client, 'lock:naive', 'first', 10_000);
    expect(naive).toBeDefined();

    await redis.server.restart();
    await withRivals(async (rivals) => {
      const second = await rivals.tryAcquire('naive', { ttl: 10_000 });

      expect(second?.isHeld).toBe(true);
      // Both hold at once: the first never heard of the restart.
      expect(naive!.believesHeld()).toBe(true);
      expect(await naive!.heldInRedis(redis.probe)).toBe(false);
    });
    // Reconnected before the file ends, for the same reason as in `withRivals`.
    await redis.client.ping();
  });
});
