import type { Subscription } from 'rxjs';
import request from 'supertest';
import { reportFigures } from '../harness/figures.js';
import { waitUntil } from '../harness/waits.js';
import { FeedController, FeedHub } from '../fixtures/decorator-app/feed.controller.js';
import { PLATFORMS } from '../fixtures/decorator-app/http-app.js';
import { useDecoratorApp } from '../harness/decorator-app.js';
import { openSse } from '../harness/sse-client.js';

describe.each(PLATFORMS)('@DistributedLock on an @Sse() stream (%s)', (platform) => {
  const fixture = useDecoratorApp(platform);
  let hub: FeedHub;

  beforeAll(() => {
    hub = fixture.app.get(FeedHub);
  });

  const isLocked = async (id: string) => (await fixture.client.exists(`lock:feed:${id}`)) === 1;

  it('holds the lock while the stream is open and releases it when the stream completes', async () => {
    const stream = await openSse(`${fixture.url}/feed/f1`);
    expect(stream.status).toBe(200);
    expect(await stream.next()).toEqual({ fence: expect.any(Number) });
    expect(await isLocked('f1')).toBe(true);

    hub.latest('f1').next({ data: { n: 1 } });
    expect(await stream.next()).toEqual({ n: 1 });
    expect(await isLocked('f1')).toBe(true);

    hub.latest('f1').complete();
    await stream.ended;
    await waitUntil(
      'the lock of a completed stream is released',
      async () => !(await isLocked('f1')),
    );
  });

  it('refuses a second stream on the same key while the first is open', async () => {
    const first = await openSse(`${fixture.url}/feed/f2`);
    expect(await first.next()).toEqual({ fence: expect.any(Number) });

    const second = await request(fixture.url).get('/feed/f2');

    expect(second.status).toBe(409);
    expect(second.body.message).toBe('Resource "feed:f2" is busy. Retry later.');
    expect(hub.opened('f2')).toHaveLength(1);
    hub.latest('f2').complete();
    await first.ended;
  });

  it('releases the lock when the client disconnects', async () => {
    const stream = await openSse(`${fixture.url}/feed/f3`);
    expect(await stream.next()).toEqual({ fence: expect.any(Number) });
    expect(await isLocked('f3')).toBe(true);

    const closedAt = performance.now();
    stream.close();

    await waitUntil(
      'the lock of an abandoned stream is released',
      async () => !(await isLocked('f3')),
    );
    const releasedAfter = performance.now() - closedAt;
    // Unsubscribed too: the producer is not left running for nobody.
    await waitUntil('the feed has no subscriber', () => !hub.latest('f3').observed);
    reportFigures(`${platform} sse disconnect`, { msToRelease: Math.round(releasedAfter) });
  });

  it('takes the lock again, with a new fence, for each new stream', async () => {
    const fences: { fence: number }[] = [];
    for (let round = 0; round < 2; round++) {
      const stream = await openSse(`${fixture.url}/feed/f4`);
      fences.push((await stream.next()) as { fence: number });
      hub.latest('f4').complete();
      await stream.ended;
      await waitUntil('the stream released its lock', async () => !(await isLocked('f4')));
    }

    expect(fences[1]!.fence).toBeGreaterThan(fences[0]!.fence);
  });
});

describe('@DistributedLock on a method returning an Observable', () => {
  const fixture = useDecoratorApp('express');
  let hub: FeedHub;
  let feed: FeedController;

  beforeAll(() => {
    hub = fixture.app.get(FeedHub);
    feed = fixture.app.get(FeedController);
  });

  const isLocked = async (id: string) => (await fixture.client.exists(`lock:feed:${id}`)) === 1;

  it('takes the lock on subscription, not when the method is called', async () => {
    const stream = feed.stream('o1');

    // The method itself has not run yet: it runs under the lock, once subscribed.
    expect(hub.opened('o1')).toHaveLength(0);
    expect(await isLocked('o1')).toBe(false);
    const subscription = stream.subscribe();
    await waitUntil('the subscription holds the lock', () => isLocked('o1'));
    expect(hub.opened('o1')).toHaveLength(1);
    subscription.unsubscribe();
    await waitUntil('unsubscribing released the lock', async () => !(await isLocked('o1')));
  });

  it('locks each subscription anew: a concurrent one is refused, a later one locks again', async () => {
    const stream = feed.stream('o2');
    const seen: unknown[] = [];
    const errors: unknown[] = [];
    const first: Subscription = stream.subscribe({ next: (event) => seen.push(event) });
    const firstFence = () => (seen[0] as { data: { fence: number } }).data.fence;
    await waitUntil('the first subscription is live', () => seen.length === 1);

    stream.subscribe({ error: (error: unknown) => errors.push(error) });
    await waitUntil('the second subscription failed', () => errors.length === 1);

    expect(errors[0]).toMatchObject({ name: 'LockBusyError', key: 'feed:o2' });
    first.unsubscribe();
    await waitUntil('the lock is free again', async () => !(await isLocked('o2')));

    const third: unknown[] = [];
    const again = stream.subscribe({ next: (event) => third.push(event) });
    await waitUntil('a later subscription takes the lock again', () => third.length === 1);
    expect(third).toEqual([{ data: { fence: expect.any(Number) } }]);
    expect((third[0] as { data: { fence: number } }).data.fence).toBeGreaterThan(firstFence());
    again.unsubscribe();
  });

  it('releases the lock when the stream errors, and passes the error on', async () => {
    const failure = new Error('feed broke');
    const errors: unknown[] = [];
    feed.stream('o3').subscribe({ error: (error: unknown) => errors.push(error) });
    await waitUntil('the feed is open', () => hub.opened('o3').length === 1);

    hub.latest('o3').error(failure);

    // The subscriber hears the error only once the lock is gone, as with a rejected Promise.
    await waitUntil('the error is passed on', () => errors.length === 1);
    expect(errors).toEqual([failure]);
    expect(await isLocked('o3')).toBe(false);
  });
});
