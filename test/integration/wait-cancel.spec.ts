import type { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import type { Lock } from '../../lib/engine/lock.interface.js';
import { LockBusyError } from '../../lib/errors/lock.errors.js';
import { createTestEngine } from '../harness/test-engine.js';
import { useRedisServer } from '../harness/use-redis.js';
import { activeChannels, callsBetween, commandCalls } from '../harness/command-stats.js';
import { ENGINE_IDLE, engineIdle, engineState } from '../harness/engine-state.js';
import { figure } from '../harness/figures.js';
import { loopLag } from '../harness/loop-lag.js';
import { outcome, waitUntil, within } from '../harness/waits.js';
import { scanKeys } from '../harness/scan-keys.js';

const CHANNEL = '{lock:k}\x1freleased';

describe('giving up a wait', () => {
  // redis.client is the waiter's connection; the holder has its own.
  const redis = useRedisServer();
  let holderClient: Redis;
  // Two engines on two connections stand for two processes.
  let holderEngine: LockEngine;
  let engine: LockEngine;
  let holder: Lock;

  beforeAll(() => {
    holderClient = redis.connect();
  });

  beforeEach(async () => {
    holderEngine = createTestEngine(holderClient);
    engine = createTestEngine(redis.client);
    holder = await holderEngine.acquire('k', { ttl: 10_000 });
  });

  afterEach(async () => {
    await engine.close();
    await holderEngine.close();
    await redis.probe.flushall();
  });

  /** The waiter is gone without a trace: no subscription, no queue, only the holder's key. */
  async function expectNothingLeftBehind(): Promise<void> {
    // A subscription may still be on its way when the waiter gives up: wait for the engine to
    // undo it, then for Redis to show it gone.
    await waitUntil('the engine to settle and its channel to be unsubscribed', () =>
      engineIdle(engine, redis.probe),
    );
    expect(await redis.probe.pubsub('NUMSUB', CHANNEL)).toEqual([CHANNEL, 0]);
    expect(await engineState(engine, redis.probe)).toEqual(ENGINE_IDLE);
    expect(await scanKeys(redis.probe)).toEqual(['lock:k']);
    expect(await redis.probe.get('lock:k')).toBe(holder.token);
    // With no waiter left, the freed key must stay free.
    expect(await holder.release()).toBe('released');
    expect(await scanKeys(redis.probe)).toEqual([]);
  }

  it('throws LockBusyError after about `wait` ms', async () => {
    const lag = loopLag();
    const calledAt = performance.now();
    const result = await outcome(engine.acquire('k', { wait: 200 }));
    const slack = lag.stop();

    const elapsed = result.at - calledAt;
    figure('wait-cancel: wait 200 -> LockBusyError after (ms)', elapsed);
    expect(result.error).toBeInstanceOf(LockBusyError);
    expect(result.error).toMatchObject({ key: 'k', statusCode: 409 });
    expect((result.error as LockBusyError).waited).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(600 + slack);
    await expectNothingLeftBehind();
  });

  it('rejects with the reason of a signal aborted before the call, without a store call', async () => {
    const controller = new AbortController();
    const reason = new Error('request cancelled');
    controller.abort(reason);
    const before = await commandCalls(redis.probe);

    const busy = await outcome(engine.acquire('k', { signal: controller.signal }));
    const free = await outcome(engine.acquire('other', { signal: controller.signal }));
    await redis.client.ping(); // anything sent on the engine's connection has now been run

    expect(busy.error).toBe(reason);
    expect(free.error).toBe(reason);
    expect(callsBetween(before, await commandCalls(redis.probe))).toEqual({});
    await expectNothingLeftBehind();
  });

  it("rejects with the signal's default AbortError when aborted without a reason", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await outcome(engine.acquire('k', { signal: controller.signal }));
    expect(result.error).toBe(controller.signal.reason);
    expect(result.error).toMatchObject({ name: 'AbortError' });
    await expectNothingLeftBehind();
  });

  it.each([
    ['a finite wait', 10_000],
    ['an infinite wait', Infinity],
  ])('rejects with the reason of a signal aborted mid-wait (%s)', async (_, wait) => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const pending = outcome(engine.acquire('k', { wait, signal: controller.signal }));
    // Subscribed means queued and asleep: the first attempt is over.
    await waitUntil('the waiter to subscribe', async () =>
      (await activeChannels(redis.probe)).includes(CHANNEL),
    );

    const lag = loopLag();
    const abortedAt = performance.now();
    controller.abort(reason);
    const result = await within('the rejection after abort', pending, 1_000);
    const slack = lag.stop();

    figure('wait-cancel: abort -> rejection (ms)', result.at - abortedAt);
    expect(result.error).toBe(reason);
    expect(result.at - abortedAt).toBeLessThan(50 + slack);
    await expectNothingLeftBehind();
  });

  it('rejects with the reason of a signal aborted while queued behind a local holder', async () => {
    // The holder is in this engine, so the waiter queues in memory without asking Redis.
    const local = await engine.acquire('mine', { ttl: 10_000 });
    const controller = new AbortController();
    const reason = new Error('gave up');
    const pending = outcome(engine.acquire('mine', { wait: 10_000, signal: controller.signal }));
    await waitUntil('the waiter to queue', () => engine.stats().queues === 1);
    controller.abort(reason);

    expect((await within('the rejection', pending, 1_000)).error).toBe(reason);
    expect(await local.release()).toBe('released');
    await expectNothingLeftBehind();
  });

  it('rejects with the reason of a signal aborted during the first attempt', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled early');
    const lag = loopLag();
    const calledAt = performance.now();
    const pending = outcome(engine.acquire('k', { wait: 1_000, signal: controller.signal }));
    controller.abort(reason); // the ACQUIRE script is on the wire now

    const result = await within('the rejection', pending, 2_000);
    expect(result.error).toBe(reason);
    // Far below `wait`, with this process's event-loop delay allowed for up to half of it.
    expect(result.at - calledAt).toBeLessThan(200 + Math.min(lag.stop(), 500));
  });
});
