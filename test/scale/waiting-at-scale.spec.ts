import type { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import type { Lock } from '../../lib/engine/lock.interface.js';
import { POLLS_PER_SECOND } from '../../lib/policy/wait-policy.js';
import { createTestEngine } from '../harness/test-engine.js';
import { useRedisServer } from '../harness/use-redis.js';
import { waitUntil } from '../harness/waits.js';

/*
 * Waiters that hear no release still look now and then (`pollCap`), in case a notification was
 * lost. Many keys waited on at once in one process share a budget of such looks, so that they
 * do not turn into thousands of commands a second; the notifications still wake each at once.
 */
const WINDOW_MS = 3_000;
const HOLD_TTL = 30_000;

describe('waiting for many keys in one process', () => {
  const redis = useRedisServer();
  let holder: LockEngine;
  let waiter: LockEngine;
  let waiterClient: Redis;

  beforeEach(async () => {
    holder = createTestEngine(redis.client);
    waiterClient = redis.client.duplicate();
    // 2,000 subscribes go out at once: give the store time to answer them all.
    waiter = createTestEngine(waiterClient, { pollCap: 1_000, storeTimeout: 10_000 });
  });

  afterEach(async () => {
    await Promise.all([holder.close(), waiter.close()]);
    waiterClient.disconnect();
  });

  /** Holds `count` keys, has the waiter wait for each, and counts its attempts in a window. */
  async function attemptsWhileWaiting(count: number) {
    const keys = Array.from({ length: count }, (_, i) => `scale:${count}:${i}`);
    const held: Lock[] = await Promise.all(
      keys.map((key) => holder.acquire(key, { ttl: HOLD_TTL })),
    );
    const waiting = keys.map((key) => waiter.acquire(key, { wait: HOLD_TTL }));
    // Every waiter has tried once and subscribed (one channel per key).
    await waitUntil('every waiter subscribed', async () => (await channels()) >= count, 20_000);
    // Past the first attempts, which come all at once.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const before = await attempts();
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const perSecond = ((await attempts()) - before) / (WINDOW_MS / 1000);
    const releasedAt = performance.now();
    await Promise.all(held.map((lock) => lock.release()));
    const granted = await Promise.all(waiting);
    const handOverMs = performance.now() - releasedAt;
    await Promise.all(granted.map((lock) => lock.release()));
    return { perSecond, handOverMs };
  }

  async function channels(): Promise<number> {
    return (await redis.probe.pubsub('CHANNELS')).length;
  }

  /** Scripts run by the server (the waiters' attempts are scripts: they wait in turn). */
  async function attempts(): Promise<number> {
    const stats = await redis.probe.info('commandstats');
    return Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0);
  }

  it('a few waiting keys each look about once per pollCap', async () => {
    const { perSecond } = await attemptsWhileWaiting(100);
    // The control: about 100 a second. The jitter adds up to 5%.
    expect(perSecond).toBeGreaterThan(60);
    expect(perSecond).toBeLessThan(130);
  });

  it('2,000 waiting keys share the budget of looks, and are still each woken by their release', async () => {
    const { perSecond, handOverMs } = await attemptsWhileWaiting(2_000);
    // Unbudgeted, this would be about 2,000 a second.
    expect(perSecond).toBeLessThan(POLLS_PER_SECOND * 1.5);
    // Not polled: 2,000 waiters polling at the budget would take 10 s.
    expect(handOverMs).toBeLessThan(5_000);
  });
});
