import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { HttpAdapterHost, NestFactory } from '@nestjs/core';
import type { Redis } from 'ioredis';
import {
  AllErrorsFilter,
  BlindFilter,
  OwnFilterAppModule,
} from '../fixtures/own-filter-app/own-filter-app.js';
import { RedisServer } from '../harness/redis-server.js';
import { post } from '../harness/http-post.js';

describe("an app's own catch-all filter, registered with useGlobalFilters", () => {
  let redis: RedisServer;
  let admin: Redis;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
    admin = redis.client();
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await admin?.quit();
    await redis?.stop();
  });

  async function start(filter: typeof AllErrorsFilter | typeof BlindFilter): Promise<string> {
    const app = await NestFactory.create(OwnFilterAppModule.register({ redis: redis.url }), {
      logger: false,
    });
    app.useGlobalFilters(new filter(app.get(HttpAdapterHost)));
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    return `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  }

  beforeEach(async () => {
    await admin.set('lock:report:7', 'someone-else', 'PX', 10_000);
  });

  it('runs instead of LockExceptionFilter: a filter blind to lock errors answers a busy lock 500', async () => {
    const response = await post(await start(BlindFilter), '/reports/7');

    expect(response.status).toBe(500);
  });

  it("answers lock errors as the library does when it replies with lockErrorBody (docs/api.md's filter)", async () => {
    const url = await start(AllErrorsFilter);

    const busy = await post(url, '/reports/7');
    const free = await post(url, '/reports/8');

    expect(busy.status).toBe(409);
    expect(busy.body).toEqual({
      statusCode: 409,
      error: 'LOCK_BUSY',
      message: 'Resource "report:7" is busy. Retry later.',
      resource: 'report:7',
    });
    expect(free.status).toBe(201);
  });
});
