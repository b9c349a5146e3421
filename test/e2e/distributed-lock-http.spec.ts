import type { Redis } from 'ioredis';
import request from 'supertest';
import { reportFigures } from '../harness/figures.js';
import { RedisServer } from '../harness/redis-server.js';
import { DecoratorAppModule } from '../fixtures/decorator-app/decorator-app.module.js';
import { holdUntilArrival, rendezvous } from '../fixtures/decorator-app/hold-policies.js';
import { PLATFORMS, startHttpApp, type HttpApp } from '../fixtures/decorator-app/http-app.js';
import { overlapOf, Probe } from '../fixtures/decorator-app/probe.js';
import { StockService } from '../fixtures/decorator-app/stock.service.js';
import { post } from './support/http.js';

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
  let redis: RedisServer;
  let client: Redis;
  let probe: Probe;
  let http: HttpApp;

  beforeAll(async () => {
    redis = await RedisServer.start();
    client = redis.client();
    probe = new Probe();
    http = await startHttpApp(DecoratorAppModule.register({ redis: redis.url }, probe), platform);
  });

  afterAll(async () => {
    await http?.app.close();
    await client?.quit();
    await redis?.stop();
  });

  describe.each(LOCKED_ROUTES)('a locked $kind method', ({ kind, path, key }) => {
    it('serializes two concurrent requests for the same key: the second waits', async () => {
      const [first, second] = [`${kind}-same-1`, `${kind}-same-2`];
      probe.hold = holdUntilArrival(probe, first, second);

      const firstResponse = post(http.url, path('same'), first);
      expect(await probe.entered(first)).toBe(true);
      expect(await client.exists(`lock:${key('same')}`)).toBe(1);
      const responses = await Promise.all([firstResponse, post(http.url, path('same'), second)]);

      expect(responses.map((response) => response.status)).toEqual([201, 201]);
      expect(responses[1].body).toMatchObject({ key: key('same') });
      const [a, b] = [probe.sectionOf(first), probe.sectionOf(second)];
      // The second request was at the handler while the first was inside, and still waited.
      expect(probe.arrivals.get(second)).toBeLessThan(a.exit);
      expect(b.enter).toBeGreaterThanOrEqual(a.exit);
      expect(overlapOf(a, b)).toBeLessThanOrEqual(0);
      expect(await client.exists(`lock:${key('same')}`)).toBe(0);
      reportFigures(`${platform} ${kind} same key`, {
        overlapMs: overlapOf(a, b),
        secondWaitedMs: b.enter - probe.arrivals.get(second)!,
      });
    });

    it('runs requests for different keys in parallel', async () => {
      const [first, second] = [`${kind}-other-1`, `${kind}-other-2`];
      probe.hold = rendezvous(probe, [first, second]);

      const responses = await Promise.all([
        post(http.url, path('left'), first),
        post(http.url, path('right'), second),
      ]);

      expect(responses.map((response) => response.status)).toEqual([201, 201]);
      expect(responses.map((response) => response.body.key)).toEqual([key('left'), key('right')]);
      const overlap = overlapOf(probe.sectionOf(first), probe.sectionOf(second));
      expect(overlap).toBeGreaterThan(0);
      reportFigures(`${platform} ${kind} different keys`, { overlapMs: overlap });
    });
  });

  describe('results', () => {
    it('answers with the value of a synchronous handler', async () => {
      const response = await request(http.url).get('/orders/7/total');

      expect(response.status).toBe(200);
      expect(response.body).toEqual({ id: '7', total: 42, key: 'total:7' });
    });

    it('returns the value of a synchronous service method inside a Promise', async () => {
      const result: unknown = http.app.get(StockService).level('sync');

      expect(result).toBeInstanceOf(Promise);
      await expect(result).resolves.toEqual({ sku: 'sync', level: 7, key: 'stock:sync' });
    });

    it("passes the method's HttpException through with its status and body, and unlocks", async () => {
      for (let attempt = 0; attempt < 2; attempt++) {
        const response = await post(http.url, '/orders/r1/refuse');

        expect(response.status).toBe(418);
        expect(response.body).toEqual({ reason: 'refused', id: 'r1', lockKey: 'refusal:r1' });
        expect(await client.exists('lock:refusal:r1')).toBe(0);
      }
    });

    it.each([
      ['async', 'fail'],
      ['sync', 'failNow'],
    ] as const)("rejects with the %s method's own error, untouched", async (_, method) => {
      const error = new TypeError('the method failed');
      const service = http.app.get(StockService);

      const result: unknown = service[method]('boom', error);

      expect(result).toBeInstanceOf(Promise);
      await expect(result).rejects.toBe(error);
      expect(await client.exists('lock:stock:boom')).toBe(0);
    });
  });
});
