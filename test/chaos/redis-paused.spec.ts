import { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockBusyError, LockLostError, LockStoreError } from '../../lib/errors/lock.errors.js';
import { createLockEngine } from '../../lib/nest/lock-engine.factory.js';
import { reportFigures } from '../harness/figures.js';
import { later } from '../harness/handled-later.js';
import { useRedisServer } from '../harness/use-redis.js';
import { abortTime, outcome, waitUntil, within } from '../harness/waits.js';
import { loopLag } from '../harness/loop-lag.js';
import { CHAOS, timeoutFor } from '../harness/chaos-profile.js';
import { caughtUp } from '../harness/engine-state.js';
import { lockKeys } from '../harness/scan-keys.js';
import { nextEvent } from '../harness/engine-events.js';

const TTL = 600;
const RENEW_INTERVAL = TTL / 3;
const STORE_TIMEOUT = 300;
// Past the ttl and every bound below: Redis comes back only after all of them have passed.
const PAUSE_MS = 2 * TTL;
// Timer slack on a busy 2-core host; each test adds the event-loop lag it measured.
const MARGIN = 100;

describe('Redis paused (SIGSTOP) past the ttl', () => {
  const redis = useRedisServer();
  let engine: LockEngine;

  beforeEach(async () => {
    // As LockModule builds it: the module's own client, which never resends.
    engine = createLockEngine({
      redis: redis.server.url,
      storeTimeout: STORE_TIMEOUT,
      shutdownTimeout: 0,
    });
    await warmUp(engine);
  });

  afterEach(async () => {
    redis.server.resume();
    await engine.close();
    await redis.probe.flushall();
  });

  /** Pauses Redis for `ms` from now; resolves with `performance.now()` once it runs again. */
  function pauseFor(ms: number): Promise<number> {
    redis.server.pause();
    return new Promise((resolve) =>
      setTimeout(() => {
        redis.server.resume();
        resolve(performance.now());
      }, ms),
    );
  }

  /** Holds `key` with renewal on, pauses Redis, and measures when the holder is told. */
  async function pauseUnderHolder(key: string): Promise<void> {
    const renewedAt: number[] = [];
    const subscription = engine.events$.subscribe((event) => {
      if (event.type === 'renewed' && event.key === key) renewedAt.push(performance.now());
    });
    const renewed = later(nextEvent(engine, 'renewed', key));
    const lock = await engine.acquire(key, { ttl: TTL });
    // From a steady renewal rhythm, not from the acquire.
    await renewed;
    const aborted = abortTime(lock.signal);
    const lag = loopLag();

    const pausedAt = performance.now();
    const resumed = pauseFor(PAUSE_MS);
    const abortedAt = await within('the abort while Redis is paused', aborted, PAUSE_MS + TTL);
    const resumedAt = await resumed;
    const slack = lag.stop();
    subscription.unsubscribe();
    const lastRenewal = Math.max(...renewedAt.filter((at) => at <= pausedAt));

    reportFigures('redis paused: last renewal -> abort', {
      ms: Math.round(abortedAt - lastRenewal),
      bound: TTL + MARGIN + Math.round(slack),
      pauseToAbort: Math.round(abortedAt - pausedAt),
      abortBeforeResume: Math.round(resumedAt - abortedAt),
    });
    // The local lease deadline fires: no answer from Redis is needed to tell the holder.
    expect(abortedAt).toBeLessThan(resumedAt);
    expect(abortedAt - lastRenewal).toBeLessThanOrEqual(TTL + MARGIN + slack);
    // Not before the lease the last renewal bought could have run out.
    expect(abortedAt - pausedAt).toBeGreaterThanOrEqual(TTL - RENEW_INTERVAL - MARGIN);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect(lock.signal.reason).toMatchObject({ key, reason: 'unreachable' });
    expect(lock.isHeld).toBe(false);
    // Renewals queued during the pause land after the lease ended: none brings the key back.
    await caughtUp(engine);
    expect(await redis.probe.exists(`lock:${key}`)).toBe(0);
  }

  it(
    "aborts a renewed holder's signal at its local lease deadline, before Redis answers again",
    async () => {
      for (let round = 0; round < CHAOS.rounds; round++) await pauseUnderHolder(`held:${round}`);
    },
    timeoutFor(PAUSE_MS + 3 * TTL),
  );

  /**
   * Acquires of every shape, two of them queued on one key, all started while Redis sleeps;
   * each names its keys under `at`, and allows `wait` ms beside the store timeout.
   */
  const CALLS: [string, (at: string) => Promise<unknown>, number][] = [
    ['acquire, wait 0', (at) => engine.acquire(`${at}:a`, { ttl: TTL, wait: 0 }), 0],
    ['acquire, wait 500', (at) => engine.acquire(`${at}:b`, { ttl: TTL, wait: 500 }), 500],
    ['tryAcquire', (at) => engine.tryAcquire(`${at}:c`, { ttl: TTL }), 0],
    ['fenced, wait 0', (at) => engine.acquire(`${at}:d`, { fencing: true, wait: 0 }), 0],
    ['withLock, wait 500', (at) => engine.withLock(`${at}:e`, noWork, { wait: 500 }), 500],
    ['queued first', (at) => engine.acquire(`${at}:q`, { ttl: TTL, wait: 500 }), 500],
    ['queued second', (at) => engine.acquire(`${at}:q`, { ttl: TTL, wait: 500 }), 500],
    ['two keys', (at) => engine.acquire([`${at}:f`, `${at}:g`], { wait: 0 }), 0],
  ];

  it(
    'fails acquires made during the pause with LockStoreError in time, and leaves no key behind',
    async () => {
      for (let round = 0; round < CHAOS.rounds; round++) {
        const lag = loopLag();
        redis.server.pause();
        const results = await Promise.all(
          CALLS.map(async ([name, call, wait]) => {
            const startedAt = performance.now();
            const { error, value } = await outcome(call(`paused:${round}`));
            return { name, wait, error, value, ms: performance.now() - startedAt };
          }),
        );
        redis.server.resume();
        const slack = lag.stop();

        reportFigures('redis paused: acquire settle times', {
          ...Object.fromEntries(results.map(({ name, ms }) => [name, Math.round(ms)])),
          slack: Math.round(slack),
        });
        for (const { name, wait, error, value, ms } of results) {
          expect({ name, value, busy: error instanceof LockBusyError }).toEqual({
            name,
            value: undefined,
            busy: false,
          });
          expect(error).toBeInstanceOf(LockStoreError);
          expect(ms).toBeLessThanOrEqual(Math.max(STORE_TIMEOUT, wait) + MARGIN + slack);
        }
        // Each attempt's give-back is sent once the store has answered it (after the resume), on
        // the same connection: the keys go within a round trip or two, well before their leases
        // (TTL, and the default 30 s of the fenced and two-key calls) would end.
        await caughtUp(engine);
        const resumedAt = performance.now();
        await waitUntil(
          'the give-backs to land',
          async () => (await lockKeys(redis.probe)).length === 0,
          TTL / 2,
          5,
        );
        reportFigures('redis paused: give-backs landed', {
          ms: Math.round(performance.now() - resumedAt),
        });
        expect(engine.heldCount).toBe(0);
      }
    },
    timeoutFor(5_000),
  );

  // Canary: a client that times a SET NX PX out and walks away leaves its key in Redis.
  it('canary: a naive SET NX PX abandoned at its own timeout leaves the key after resume', async () => {
    const naive = new Redis({ port: redis.server.port, commandTimeout: STORE_TIMEOUT });
    naive.on('error', () => undefined);
    try {
      await naive.ping();
      redis.server.pause();
      const { error } = await outcome(naive.set('lock:naive', 'orphan', 'PX', 30_000, 'NX'));
      redis.server.resume();
      await naive.ping();

      expect((error as Error).message).toMatch(/timed out/i);
      expect(await redis.probe.get('lock:naive')).toBe('orphan');
      expect(await redis.probe.pttl('lock:naive')).toBeGreaterThan(20_000);
      // The orphan blocks every other holder for its whole lease.
      const { error: busy } = await outcome(engine.acquire('naive', { wait: 0 }));
      expect(busy).toBeInstanceOf(LockBusyError);
    } finally {
      naive.disconnect();
    }
  });
});

/**
 * Connects and loads the acquire scripts, as a running app has. With a cold script cache, an
 * attempt that timed out falls back from EVALSHA to EVAL after its give-back has run, and sets
 * its key for a whole ttl: a library bug this file steps around, reported separately.
 */
async function warmUp(engine: LockEngine): Promise<void> {
  await (await engine.acquire('warm-up', { fencing: true })).release();
  await (await engine.acquire(['warm-up', 'warm-up:b'])).release();
}

function noWork(): void {
  throw new Error('withLock ran its work while Redis was paused');
}
