import { NestFactory } from '@nestjs/core';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { LockBusyError, LockOptionsError, type LockModuleOptions } from '../../lib/index.js';
import { reportFigures } from '../harness/figures.js';
import { RedisServer } from '../harness/redis-server.js';
import { errorOf } from '../harness/waits.js';
import { DecoratorAppModule } from '../fixtures/decorator-app/decorator-app.module.js';
import { gate } from '../fixtures/decorator-app/hold-policies.js';
import { startHttpApp, type HttpApp } from '../fixtures/decorator-app/http-app.js';
import { OrdersController } from '../fixtures/decorator-app/orders.controller.js';
import { overlapOf, Probe } from '../fixtures/decorator-app/probe.js';
import { StockService } from '../fixtures/decorator-app/stock.service.js';
import { WiringAppModule } from '../fixtures/wiring-app/reports.module.js';
import { post } from '../harness/http-post.js';

describe('@DistributedLock wiring', () => {
  let redis: RedisServer;
  const clients: Redis[] = [];
  const apps: HttpApp[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
  });

  afterAll(async () => {
    await Promise.all(apps.map(({ app }) => app.close()));
    await Promise.all(clients.map((client) => client.quit()));
    await redis?.stop();
  });

  async function start(module: Parameters<typeof startHttpApp>[0]): Promise<HttpApp> {
    const http = await startHttpApp(module, 'express');
    apps.push(http);
    return http;
  }

  function client(db = 0): Redis {
    const created = redis.client({ db });
    clients.push(created);
    return created;
  }

  describe('without a LockService', () => {
    it('fails a call on an instance created with `new`, telling to import LockModule', async () => {
      const service = new StockService(new Probe());

      const error = await errorOf(() => service.reserve('s1', 'unmanaged'));

      expect(error).toBeInstanceOf(LockOptionsError);
      expect((error as Error).message).toContain('StockService.reserve');
      expect((error as Error).message).toContain('Import LockModule.forRoot');
      expect((error as Error).message).toContain('created with `new`');
    });

    it('fails bootstrap in a module that does not import LockModule, telling what to import', async () => {
      const bootstrap = NestFactory.createApplicationContext(
        WiringAppModule.register({ redis: redis.url }),
        { logger: false, abortOnError: false },
      );

      const error = await errorOf(() => bootstrap);

      expect(error).toBeInstanceOf(LockOptionsError);
      expect((error as Error).message).toContain('ReportsService.build');
      expect((error as Error).message).toContain('Import LockModule.forRoot');
    });

    it('works there once LockModule is registered with isGlobal: true', async () => {
      const http = await start(WiringAppModule.register({ redis: redis.url, isGlobal: true }));

      const response = await request(http.url).post('/reports/r2');

      expect(response.status).toBe(201);
      expect(response.body).toEqual({ id: 'r2', key: 'report:r2' });
    });
  });

  describe('two apps in one process', () => {
    /** Two module configurations on one redis-server, and where each one's lock on "k" lives. */
    interface Separation {
      readonly options: (url: string) => [LockModuleOptions, LockModuleOptions];
      readonly keys: [db: number, key: string][];
    }
    const separations: [string, Separation][] = [
      [
        'separate Redis databases',
        {
          options: (url) => [{ redis: `${url}/1` }, { redis: `${url}/2` }],
          keys: [
            [1, 'lock:booking:k'],
            [2, 'lock:booking:k'],
          ],
        },
      ],
      [
        'separate key prefixes',
        {
          options: (url) => [
            { redis: url, keyPrefix: 'app-a:' },
            { redis: url, keyPrefix: 'app-b:' },
          ],
          keys: [
            [0, 'app-a:booking:k'],
            [0, 'app-b:booking:k'],
          ],
        },
      ],
    ];

    it.each(separations)('with %s both hold "k" at once', async (separation, { options, keys }) => {
      const [first, second] = options(redis.url);
      const probe = new Probe();
      const door = gate();
      probe.hold = door.hold;
      const appA = await start(DecoratorAppModule.register(first, probe));
      const appB = await start(DecoratorAppModule.register(second, probe));

      // wait: 0 on both: had either seen the other's lock, it would have answered 409.
      const responses = [
        post(appA.url, '/orders/k/book', 'a'),
        post(appB.url, '/orders/k/book', 'b'),
      ];
      expect(await probe.entered('a')).toBe(true);
      expect(await probe.entered('b')).toBe(true);
      for (const [db, key] of keys) expect(await client(db).exists(key)).toBe(1);
      door.release();

      expect((await Promise.all(responses)).map((response) => response.status)).toEqual([201, 201]);
      const overlap = overlapOf(probe.sectionOf('a'), probe.sectionOf('b'));
      expect(overlap).toBeGreaterThan(0);
      reportFigures(`two apps, ${separation}`, { overlapMs: overlap });
    });

    it("does not treat one app's held lock as reentrant for the other app", async () => {
      const probe = new Probe();
      const appA = await start(DecoratorAppModule.register({ redis: redis.url }, probe));
      const appB = await start(DecoratorAppModule.register({ redis: redis.url }, probe));
      let inner: unknown;
      // Inside app A's lock on "booking:shared", app B asks for the same key (wait: 0).
      probe.hold = async (label) => {
        if (label !== 'outer') return;
        inner = await errorOf(() => appB.app.get(OrdersController).book('shared', 'inner'));
      };

      const response = await post(appA.url, '/orders/shared/book', 'outer');

      expect(response.status).toBe(201);
      expect(inner).toBeInstanceOf(LockBusyError);
      expect(probe.sections.map((section) => section.label)).toEqual(['outer']);
    });
  });
});
