import type { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockBusyError, LockLostError, LockStoreError } from '../../lib/errors/lock.errors.js';
import { createTestEngine } from '../harness/test-engine.js';
import { useRedisServer } from '../harness/use-redis.js';
import { abortTime, outcome, waitUntil, within } from '../harness/waits.js';
import { activeChannels, callsBetween, commandCalls } from '../harness/command-stats.js';
import { figure } from '../harness/figures.js';
import { loopLag } from '../harness/loop-lag.js';
import { realProcess } from '../harness/real-process.js';
import { scanKeys } from '../harness/scan-keys.js';

const STORE_TIMEOUT = 300;
// A failing call may answer through ioredis' own error rather than our timer; either way it
// must not take longer than the timeout plus a little scheduling slack.
const MARGIN = 100;

/** ioredis has nothing queued or in flight: every command it will ever settle has settled. */
function drained(client: Redis): boolean {
  const inner = client as unknown as {
    offlineQueue: { length: number };
    commandQueue: { length: number };
  };
  return inner.offlineQueue.length === 0 && inner.commandQueue.length === 0;
}

/** Two turns of the event loop: Node reports unhandled rejections after the microtasks drain. */
async function afterRejectionChecks(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('store failures', () => {
  const escaped: unknown[] = [];
  const record = (error: unknown): void => void escaped.push(error);
  const redis = useRedisServer({
    beforeStop: () => {
      realProcess.off('unhandledRejection', record);
      realProcess.off('uncaughtException', record);
    },
  });
  let engine: LockEngine;

  beforeAll(() => {
    realProcess.on('unhandledRejection', record);
    realProcess.on('uncaughtException', record);
  });

  beforeEach(() => {
    engine = createTestEngine(redis.client, { storeTimeout: STORE_TIMEOUT });
  });

  afterEach(async () => {
    redis.server.resume();
    if (redis.server.pid === undefined) await redis.server.restart();
    await engine.close();
    await waitUntil(
      'the clients to reconnect',
      () => redis.client.status === 'ready' && redis.probe.status === 'ready',
      5_000,
    );
    await redis.probe.flushall();
    expect(escaped).toEqual([]);
  });

  it('rejects acquire, tryAcquire and withLock with LockStoreError within storeTimeout while Redis is down', async () => {
    await redis.server.stop();
    let workCalls = 0;
    const work = (): void => void workCalls++;

    for (const [name, call] of [
      ['acquire', () => engine.acquire('k', { wait: 5_000 })],
      ['tryAcquire', () => engine.tryAcquire('k')],
      ['withLock', () => engine.withLock('k', work)],
    ] as const) {
      const lag = loopLag();
      const calledAt = performance.now();
      const result = await outcome<unknown>(call());
      const slack = lag.stop();
      figure(`store-errors: ${name} with Redis down -> error after (ms)`, result.at - calledAt);
      expect(result.error).toBeInstanceOf(LockStoreError);
      expect(result.error).not.toBeInstanceOf(LockBusyError);
      expect(result.error).toMatchObject({ key: 'k', statusCode: 503 });
      expect(result.at - calledAt).toBeLessThanOrEqual(STORE_TIMEOUT + MARGIN + slack);
    }
    expect(workCalls).toBe(0);

    // Past every timer the failed calls armed, and past ioredis settling what it had queued:
    // whatever was going to reject has rejected, handled or not.
    const quietFrom = performance.now() + 2 * STORE_TIMEOUT;
    await waitUntil(
      'ioredis to settle its queue',
      () => performance.now() > quietFrom && drained(redis.client),
      10_000,
    );
    await afterRejectionChecks();
    expect(escaped).toEqual([]);
    expect(engine.stats()).toEqual({ queues: 0, held: 0 });
  });

  it.each([
    ['stopped', (): Promise<void> => redis.server.stop()],
    ['paused (up but silent)', async (): Promise<void> => redis.server.pause()],
  ])(
    "declares a held lock lost as 'unreachable' at its local deadline when Redis is %s",
    async (_, outage) => {
      const ttl = 600;
      const lock = await engine.acquire('k', { ttl });
      const aborted = abortTime(lock.signal);

      const lag = loopLag();
      const outageAt = performance.now();
      const deadline = outageAt + lock.remainingTime();
      await outage();
      const abortedAt = await within('the loss', aborted, ttl + 2_000);
      const slack = lag.stop();

      figure(`store-errors: outage -> lost (ms), ttl ${ttl}`, abortedAt - outageAt);
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect(lock.signal.reason).toMatchObject({ key: 'k', reason: 'unreachable' });
      // Not before the lease could have run out, and no later than one ttl after the outage
      // (a renewal already on the wire may have pushed the deadline by up to one ttl).
      expect(abortedAt).toBeGreaterThanOrEqual(deadline);
      expect(abortedAt - outageAt).toBeLessThanOrEqual(ttl + MARGIN + slack);
    },
  );

  it("says 'unreachable', not 'expired', when the renewal is still unanswered at the deadline", async () => {
    const slow = createTestEngine(redis.client, { storeTimeout: 2_000 });
    try {
      const lock = await slow.acquire('k', { ttl: 300 });
      redis.server.pause();
      await within('the loss', abortTime(lock.signal), 2_000);
      expect(lock.signal.reason).toMatchObject({ reason: 'unreachable' });
    } finally {
      redis.server.resume();
      await slow.close();
    }
  });

  it('works again after Redis restarts: acquire, release and release notifications', async () => {
    const other = createTestEngine(redis.probe, { storeTimeout: STORE_TIMEOUT });
    const lostDuringOutage = await engine.acquire('k', { ttl: 600 });
    await redis.server.stop();
    await within('the loss', abortTime(lostDuringOutage.signal), 3_000);

    await redis.server.restart();
    await waitUntil(
      'the clients to reconnect',
      () => redis.client.status === 'ready' && redis.probe.status === 'ready',
      5_000,
    );

    // A fresh server has no scripts loaded: this also covers the NOSCRIPT fallback.
    const lock = await engine.acquire('k', { wait: 0 });
    expect(await redis.probe.get('lock:k')).toBe(lock.token);
    // Notifications work too: pollCap is 1 s, so a wake-up well under it came from PUBLISH.
    const waiting = outcome(other.acquire('k', { wait: 5_000 }));
    await waitUntil(
      'the waiter to subscribe',
      async () => (await activeChannels(redis.client)).length === 1,
    );
    const lag = loopLag();
    const releasedAt = performance.now();
    expect(await lock.release()).toBe('released');
    const handedOver = await waiting;
    const slack = lag.stop();
    figure(
      'store-errors: after restart, release -> waiter acquired (ms)',
      handedOver.at - releasedAt,
    );
    expect(handedOver.error).toBeUndefined();
    expect(handedOver.at - releasedAt).toBeLessThan(200 + slack);
    expect(await handedOver.value!.release()).toBe('released');
    await other.close();

    // The lock lost in the outage has no key to give back.
    expect(await lostDuringOutage.release()).toBe('expired');
    expect(await scanKeys(redis.probe)).toEqual([]);
  });

  it('gives back a key won by an acquire that answered after its timeout', async () => {
    const before = await commandCalls(redis.probe);
    const lag = loopLag();
    const calledAt = performance.now();
    redis.server.pause();
    const result = await outcome(engine.acquire('k', { wait: 0 }));
    const slack = lag.stop();
    figure('store-errors: paused -> acquire timed out after (ms)', result.at - calledAt);
    expect(result.error).toBeInstanceOf(LockStoreError);
    expect(result.at - calledAt).toBeLessThanOrEqual(STORE_TIMEOUT + MARGIN + slack);

    // On resume the queued ACQUIRE runs and takes the key; the engine must release it.
    redis.server.resume();
    await waitUntil(
      'the late win to be released',
      async () => drained(redis.client) && (await scanKeys(redis.probe)).length === 0,
    );
    // The key really was won and given back: the release script deleted it, and read no turn
    // list (nobody waits, so the key had no waiters' mark).
    await waitUntil('the release to run', async () => {
      const ran = callsBetween(before, await commandCalls(redis.probe));
      return ran.del === 1 && ran.get === 1;
    });
    expect(engine.stats()).toEqual({ queues: 0, held: 0 });
  });

  it('drops a subscription that answered after its timeout', async () => {
    await redis.probe.set('lock:k', 'someone-else', 'PX', 60_000);
    const before = await commandCalls(redis.probe);
    // Freeze Redis between the first attempt (busy) and the waiter's SUBSCRIBE.
    const freeze = engine.events$.subscribe(
      (event) => event.type === 'contended' && redis.server.pause(),
    );
    const result = await outcome(engine.acquire('k', { wait: 5_000 }));
    freeze.unsubscribe();
    expect(result.error).toBeInstanceOf(LockStoreError);

    redis.server.resume();
    // Once Redis has run the late SUBSCRIBE, the store must undo it: no channel stays subscribed.
    await waitUntil(
      'the late SUBSCRIBE to run and be undone',
      async () =>
        (callsBetween(before, await commandCalls(redis.probe)).subscribe ?? 0) >= 1 &&
        (await activeChannels(redis.probe)).length === 0,
      5_000,
    );
    expect(engine.stats()).toEqual({ queues: 0, held: 0 });
  });
});
