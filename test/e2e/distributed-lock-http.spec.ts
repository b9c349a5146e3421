import request from 'supertest';
import { reportFigures } from '../harness/figures.js';
import { holdUntilArrival, rendezvous } from '../fixtures/decorator-app/hold-policies.js';
import { PLATFORMS } from '../fixtures/decorator-app/http-app.js';
import { overlapOf } from '../fixtures/decorator-app/probe.js';
import { StockService } from '../fixtures/decorator-app/stock.service.js';
import { useDecoratorApp } from '../harness/decorator-app.js';
import { post } from '../harness/http-post.js';

/** The two kinds of locked method the fixture serves, and the lock key each takes for `id`. */
const LOCKED_ROUTES = [
  {
    kind: 'controller',
    path: (id: string) => `/orders/${id}/pay`,
    key: (id: string) => `order:${id}`,
  },
  {
    kind: 'service',
    path: (id: string) => `/stock/${id}/reserve`,
    // The controller's pipe upper-cases the SKU before the service method (and its lock) sees it.
    key: (id: string) => `stock:${id.toUpperCase()}`,
  },
];

describe.each(PLATFORMS)('@DistributedLock on HTTP handlers (%s)', (platform) => {
  const fixture = useDecoratorApp(platform);

  describe.each(LOCKED_ROUTES)('a locked $kind method', ({ kind, path, key }) => {
    it('serializes two concurrent requests for the same key: the second waits', async () => {
      const [first, second] = [`${kind}-same-1`, `${kind}-same-2`];
      fixture.probe.hold = holdUntilArrival(fixture.probe, first, second);

      const firstResponse = post(fixture.url, path('same'), first);
      expect(await fixture.probe.entered(first)).toBe(true);
      expect(await fixture.client.exists(`lock:${key('same')}`)).toBe(1);
      const responses = await Promise.all([firstResponse, post(fixture.url, path('same'), second)]);

      expect(responses.map((response) => response.status)).toEqual([201, 201]);
      expect(responses[1].body).toMatchObject({ key: key('same') });
      const [a, b] = [fixture.probe.sectionOf(first), fixture.probe.sectionOf(second)];
      // The second request was at the handler while the first was inside, and still waited.
      expect(fixture.probe.arrivals.get(second)).toBeLessThan(a.exit);
      expect(b.enter).toBeGreaterThanOrEqual(a.exit);
      expect(overlapOf(a, b)).toBeLessThanOrEqual(0);
      expect(await fixture.client.exists(`lock:${key('same')}`)).toBe(0);
      reportFigures(`${platform} ${kind} same key`, {
        overlapMs: overlapOf(a, b),
        secondWaitedMs: b.enter - fixture.probe.arrivals.get(second)!,
      });
    });

    it('runs requests for different keys in parallel', async () => {
      const [first, second] = [`${kind}-other-1`, `${kind}-other-2`];
      fixture.probe.hold = rendezvous(fixture.probe, [first, second]);

      const responses = await Promise.all([
        post(fixture.url, path('left'), first),
        post(fixture.url, path('right'), second),
      ]);

      expect(responses.map((response) => response.status)).toEqual([201, 201]);
      expect(responses.map((response) => response.body.key)).toEqual([key('left'), key('right')]);
      const overlap = overlapOf(fixture.probe.sectionOf(first), fixture.probe.sectionOf(second));
      expect(overlap).toBeGreaterThan(0);
      reportFigures(`${platform} ${kind} different keys`, { overlapMs: overlap });
    });
  });

  describe('results', () => {
    it('answers with the value of a synchronous handler', async () => {
      const response = await request(fixture.url).get('/orders/7/total');

      expect(response.status).toBe(200);
      expect(response.body).toEqual({ id: '7', total: 42, key: 'total:7' });
    });

    it('returns the value of a synchronous service method inside a Promise', async () => {
      const result: unknown = fixture.app.get(StockService).level('sync');

      expect(result).toBeInstanceOf(Promise);
      await expect(result).resolves.toEqual({ sku: 'sync', level: 7, key: 'stock:sync' });
    });

    it("passes the method's HttpException through with its status and body, and unlocks", async () => {
      for (let attempt = 0; attempt < 2; attempt++) {
        const response = await post(fixture.url, '/orders/r1/refuse');

        expect(response.status).toBe(418);
        expect(response.body).toEqual({ reason: 'refused', id: 'r1', lockKey: 'refusal:r1' });
        expect(await fixture.client.exists('lock:refusal:r1')).toBe(0);
      }
    });

    it.each([
      ['async', 'fail'],
      ['sync', 'failNow'],
    ] as const)("rejects with the %s method's own error, untouched", async (_, method) => {
      const error = new TypeError('the method failed');
      const service = fixture.app.get(StockService);

      const result: unknown = service[method]('boom', error);

      expect(result).toBeInstanceOf(Promise);
      await expect(result).rejects.toBe(error);
      expect(await fixture.client.exists('lock:stock:boom')).toBe(0);
    });
  });
});
