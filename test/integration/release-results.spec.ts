import { useRedisServer, useTestEngine } from '../harness/use-redis.js';
import { abortTime, waitUntil, within } from '../harness/waits.js';
import { callsBetween, commandCalls } from '../harness/command-stats.js';
import { recordEvents } from '../harness/engine-events.js';

describe('release results', () => {
  const redis = useRedisServer();
  const fixture = useTestEngine(redis);

  it("returns 'released' and deletes the key for a lock still held", async () => {
    const lock = await fixture.engine.acquire('k');
    expect(await lock.release()).toBe('released');
    expect(lock.isHeld).toBe(false);
    expect(lock.signal.aborted).toBe(false); // a release is not a loss
    expect(await redis.probe.exists('lock:k')).toBe(0);
  });

  it("returns 'expired' when the lease ran out before the release", async () => {
    const lock = await fixture.engine.acquire('k', { ttl: 100, autoRenew: false });
    await within('the lease end', abortTime(lock.signal), 1_000);
    // The local deadline is a little ahead of Redis' own expiry; wait for Redis to agree.
    await waitUntil(
      'the key to expire in Redis',
      async () => (await redis.probe.exists('lock:k')) === 0,
    );
    expect(await lock.release()).toBe('expired');
  });

  it("returns 'stolen' when another owner holds the key, and leaves their key intact", async () => {
    const lock = await fixture.engine.acquire('k', { ttl: 10_000, autoRenew: false });
    await redis.probe.set('lock:k', 'their-token', 'PX', 20_000);

    expect(await lock.release()).toBe('stolen');
    expect(await redis.probe.get('lock:k')).toBe('their-token');
    expect(await redis.probe.pttl('lock:k')).toBeGreaterThan(19_000);
  });

  it("returns 'stolen' after renewal already noticed the theft", async () => {
    const lock = await fixture.engine.acquire('k', { ttl: 300 });
    await redis.probe.set('lock:k', 'their-token', 'PX', 20_000);
    await within('the loss', abortTime(lock.signal), 1_000);

    expect(await lock.release()).toBe('stolen');
    expect(await redis.probe.get('lock:k')).toBe('their-token');
  });

  it.each([
    ['released', async (): Promise<void> => undefined],
    ['stolen', async (): Promise<void> => void (await redis.probe.set('lock:k', 'their-token'))],
  ])(
    'repeats the first result (%s) on a second release without touching the store',
    async (expected, before) => {
      const recorder = recordEvents(fixture.engine);
      const lock = await fixture.engine.acquire('k', { ttl: 10_000, autoRenew: false });
      await before();
      const first = await lock.release();

      // Someone takes the key after our release: a late second release must not delete it.
      await redis.probe.set('lock:k', 'next-owner');
      const callsBefore = await commandCalls(redis.probe);
      const [second, third] = await Promise.all([lock.release(), lock.release()]);
      await redis.client.ping();
      recorder.stop();

      expect(first).toBe(expected);
      expect(second).toBe(expected);
      expect(third).toBe(expected);
      expect(callsBetween(callsBefore, await commandCalls(redis.probe))).toEqual({});
      expect(await redis.probe.get('lock:k')).toBe('next-owner');
      expect(recorder.events.filter((event) => event.type === 'released')).toHaveLength(1);
    },
  );

  it('shares one store call between concurrent releases', async () => {
    const lock = await fixture.engine.acquire('k');
    const before = await commandCalls(redis.probe);
    const results = await Promise.all([lock.release(), lock.release(), lock.release()]);
    expect(results).toEqual(['released', 'released', 'released']);
    // The release script runs once: one EVALSHA, and the GET and the DEL inside it once each.
    // Nobody waits, so the value has no waiters' mark: no other key is read, nothing published.
    expect(callsBetween(before, await commandCalls(redis.probe))).toEqual({
      evalsha: 1,
      get: 1,
      del: 1,
    });
    expect(await redis.probe.exists('lock:k')).toBe(0);
  });

  it('releases at the end of an `await using` block', async () => {
    let token: string;
    {
      await using lock = await fixture.engine.acquire('k');
      token = lock.token;
      expect(await redis.probe.get('lock:k')).toBe(token);
    }
    expect(await redis.probe.exists('lock:k')).toBe(0);
    expect(fixture.engine.heldCount).toBe(0);
  });

  it('releases an `await using` lock when the block throws', async () => {
    const failing = async (): Promise<void> => {
      await using lock = await fixture.engine.acquire('k');
      expect(await redis.probe.get('lock:k')).toBe(lock.token);
      throw new Error('work failed');
    };
    await expect(failing()).rejects.toThrow('work failed');
    expect(await redis.probe.exists('lock:k')).toBe(0);
    expect(fixture.engine.heldCount).toBe(0);
  });

  it("does not delete another owner's key when an `await using` block outlives the lease", async () => {
    {
      await using lock = await fixture.engine.acquire('k', { ttl: 100, autoRenew: false });
      await within('the lease end', abortTime(lock.signal), 1_000);
      await waitUntil(
        'the key to expire in Redis',
        async () => (await redis.probe.exists('lock:k')) === 0,
      );
      await redis.probe.set('lock:k', 'their-token');
    }
    expect(await redis.probe.get('lock:k')).toBe('their-token');
  });
});
