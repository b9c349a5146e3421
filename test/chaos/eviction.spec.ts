import type { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { reportFigures } from '../harness/figures.js';
import { later } from '../harness/handled-later.js';
import { RedisServer } from '../harness/redis-server.js';
import { createTestEngine } from '../harness/test-engine.js';
import { abortTime, within } from '../harness/waits.js';
import { loopLag } from '../harness/loop-lag.js';
import { nextEvent, recordEvents } from '../harness/engine-events.js';
import { expectLostKeyGone } from '../harness/lost-lock.js';
import { CHAOS, timeoutFor } from '../harness/chaos-profile.js';

const TTL = 900;
const RENEW_INTERVAL = TTL / 3;
// A round trip and timer slack; each test adds the event-loop lag it measured.
const MARGIN = 150;
// 2 MB leaves room for about sixty of these over an idle server's own ~1 MB.
const MAXMEMORY = ['--maxmemory', '2mb', '--maxmemory-policy', 'allkeys-random'];
const FILLER = 'x'.repeat(16 * 1024);
const FILL_BATCH = 8;
const FILL_DEADLINE = 20_000;

/** Counters from `INFO stats`. */
async function evictedKeys(client: Redis): Promise<number> {
  const match = /^evicted_keys:(\d+)/m.exec(await client.info('stats'));
  return Number(match?.[1] ?? NaN);
}

/**
 * Writes big values until random eviction has taken `key`: eviction picks its victims at
 * random, so keep going until it is gone rather than write a fixed amount. Resolves with
 * `performance.now()` when the key was first seen gone (it went at or before then).
 */
async function fillUntilEvicted(filler: Redis, probe: Redis, key: string): Promise<number> {
  const deadline = performance.now() + FILL_DEADLINE;
  for (let batch = 0; performance.now() < deadline; batch++) {
    const pipeline = filler.pipeline();
    for (let i = 0; i < FILL_BATCH; i++) pipeline.set(`fill:${batch}:${i}`, FILLER);
    await pipeline.exec();
    if ((await probe.exists(key)) === 0) return performance.now();
  }
  throw new Error(`${key} survived ${FILL_DEADLINE} ms of filling`);
}

describe('a held key evicted by Redis (maxmemory, allkeys-random)', () => {
  let server: RedisServer;
  const connections: Redis[] = [];
  let engine: LockEngine;
  let rivals: LockEngine;
  let filler: Redis;
  let probe: Redis;

  const connect = (): Redis => {
    const connection = server.client();
    connections.push(connection);
    return connection;
  };

  beforeAll(async () => {
    server = await RedisServer.start(MAXMEMORY);
    filler = connect();
    probe = connect();
  });

  beforeEach(() => {
    engine = createTestEngine(connect());
    rivals = createTestEngine(connect());
  });

  afterEach(async () => {
    await Promise.all([engine.close(), rivals.close()]);
    await probe.flushall();
  });

  afterAll(async () => {
    for (const connection of connections) connection.disconnect();
    await server?.stop();
  });

  it(
    'aborts the holder (LockLostError) at its next renewal',
    async () => {
      for (let round = 0; round < CHAOS.rounds; round++) await evictUnderHolder(`evicted:${round}`);
    },
    timeoutFor(FILL_DEADLINE),
  );

  async function evictUnderHolder(key: string): Promise<void> {
    const recorder = recordEvents(engine);
    const renewed = later(nextEvent(engine, 'renewed', key));
    const lock = await engine.acquire(key, { ttl: TTL });
    await renewed;
    const evictedBefore = await evictedKeys(probe);
    const aborted = abortTime(lock.signal);
    const lag = loopLag();

    const goneAt = await fillUntilEvicted(filler, probe, `lock:${key}`);
    const abortedAt = await within('the abort after the eviction', aborted, TTL * 3);
    const slack = lag.stop();
    recorder.stop();

    reportFigures('eviction: key seen gone -> abort', {
      ms: Math.round(abortedAt - goneAt),
      evicted: (await evictedKeys(probe)) - evictedBefore,
    });
    expect(await evictedKeys(probe)).toBeGreaterThan(evictedBefore);
    // The key went at or before `goneAt`; one renewal interval later the holder knows.
    expect(abortedAt - goneAt).toBeLessThanOrEqual(RENEW_INTERVAL + MARGIN + slack);
    await expectLostKeyGone(lock, key, recorder.events, probe);
  }

  // Canary: with no renewal, nothing looks at the key before the lease ends, so the holder
  // keeps believing while another holder has already taken the evicted key.
  it(
    'canary: without autoRenew, the holder still believes after another took the key',
    async () => {
      const lock = await engine.acquire('unrenewed', { ttl: 30_000, autoRenew: false });
      const evictedBefore = await evictedKeys(probe);

      await fillUntilEvicted(filler, probe, 'lock:unrenewed');
      const second = await rivals.tryAcquire('unrenewed', { ttl: 30_000 });

      expect(await evictedKeys(probe)).toBeGreaterThan(evictedBefore);
      expect(second).toBeDefined();
      expect(await probe.get('lock:unrenewed')).toBe(second!.token);
      // Both hold at once, and the first has most of its lease still to go.
      expect(lock.isHeld).toBe(true);
      expect(lock.signal.aborted).toBe(false);
      expect(lock.remainingTime()).toBeGreaterThan(20_000);
    },
    FILL_DEADLINE + 10_000,
  );
});
