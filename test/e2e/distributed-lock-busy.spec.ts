import type { Response } from 'supertest';
import type { LockModuleOptions } from '../../lib/index.js';
import { reportFigures } from '../harness/figures.js';
import { RedisServer } from '../harness/redis-server.js';
import { DecoratorAppModule } from '../fixtures/decorator-app/decorator-app.module.js';
import { gate } from '../fixtures/decorator-app/hold-policies.js';
import { PLATFORMS, startHttpApp, type HttpApp } from '../fixtures/decorator-app/http-app.js';
import { Probe } from '../fixtures/decorator-app/probe.js';
import { waitUntil } from '../harness/waits.js';
import { post } from '../harness/http-post.js';

interface FixtureApp {
  readonly http: HttpApp;
  readonly probe: Probe;
}

describe.each(PLATFORMS)('a busy lock over HTTP (%s)', (platform) => {
  let redis: RedisServer;
  const started: HttpApp[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
  });

  afterAll(async () => {
    await Promise.all(started.map(({ app }) => app.close()));
    await redis?.stop();
  });

  async function startApp(options: LockModuleOptions): Promise<FixtureApp> {
    const probe = new Probe();
    const http = await startHttpApp(DecoratorAppModule.register(options, probe), platform);
    started.push(http);
    return { http, probe };
  }

  /** Keeps one request inside `path`'s lock while a second one is sent; the second's answer. */
  async function whileHeld({ http, probe }: FixtureApp, path: string) {
    const [holder, contender] = [`${path}:holder`, `${path}:contender`];
    const door = gate();
    probe.hold = (label) => (label === holder ? door.hold() : Promise.resolve());
    const holderResponse = post(http.url, path, holder);
    expect(await probe.entered(holder)).toBe(true);

    const response = await post(http.url, path, contender);

    door.release();
    expect((await holderResponse).status).toBe(201);
    const contenderRan = probe.sections.some((section) => section.label === contender);
    return { response, contenderRan };
  }

  describe('with default options', () => {
    let fixture: FixtureApp;
    beforeAll(async () => {
      fixture = await startApp({ redis: redis.url });
    });

    it('answers a concurrent request with wait: 0 with 409 and a JSON body naming the key', async () => {
      const { response, contenderRan } = await whileHeld(fixture, '/orders/b1/book');

      expect(response.status).toBe(409);
      expect(response.type).toBe('application/json');
      expect(response.body).toEqual({
        statusCode: 409,
        error: 'LOCK_BUSY',
        message: 'Resource "booking:b1" is busy. Retry later.',
        resource: 'booking:b1',
      });
      expect(contenderRan).toBe(false);
    });

    it("answers with onBusy's result when onBusy is a function", async () => {
      const { response, contenderRan } = await whileHeld(fixture, '/orders/s1/seat');

      expect(response.status).toBe(201);
      expect(response.body).toEqual({ id: 's1', queued: true, busyKey: 'seat:s1' });
      expect(contenderRan).toBe(false);
    });
  });

  it('answers with the busyStatusCode of the module options', async () => {
    const fixture = await startApp({ redis: redis.url, busyStatusCode: 423 });

    const { response } = await whileHeld(fixture, '/orders/b2/book');

    expect(response.status).toBe(423);
    expect(response.body).toEqual({
      statusCode: 423,
      error: 'LOCK_BUSY',
      message: 'Resource "booking:b2" is busy. Retry later.',
      resource: 'booking:b2',
    });
  });

  it('answers 503, never 409 nor a bare 500, while Redis is down, and recovers', async () => {
    const doomed = await RedisServer.start();
    let http: HttpApp | undefined;
    try {
      http = await startHttpApp(
        DecoratorAppModule.register({ redis: doomed.url, storeTimeout: 1_000 }, new Probe()),
        platform,
      );
      const { url } = http;
      expect((await post(url, '/orders/d0/book')).status).toBe(201);
      await doomed.stop();

      const startedAt = performance.now();
      const responses: Response[] = await Promise.all([
        post(url, '/orders/d1/book'),
        post(url, '/orders/d1/book'),
        post(url, '/orders/d1/pay'),
        post(url, '/stock/d1/reserve'),
      ]);
      const elapsed = performance.now() - startedAt;

      for (const response of responses) {
        expect(response.status).toBe(503);
        expect(response.body).toEqual({
          statusCode: 503,
          error: 'LOCK_STORE_UNAVAILABLE',
          message: `Resource "${response.body.resource}" is temporarily unavailable. Retry later.`,
          resource: expect.any(String),
        });
      }
      await doomed.restart();
      await waitUntil(
        'the app locks again once Redis is back',
        async () => (await post(url, '/orders/d2/book')).status === 201,
        10_000,
        100,
      );
      reportFigures(`${platform} redis down`, { msToAll503: Math.round(elapsed) });
    } finally {
      // Closed while Redis is up: closing a client that is still reconnecting leaves ioredis'
      // 2 s disconnect timer behind, which keeps Jest from exiting promptly.
      await http?.app.close();
      await doomed.stop();
    }
  });
});
