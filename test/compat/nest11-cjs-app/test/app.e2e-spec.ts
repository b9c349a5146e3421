import { INestApplication } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { LockService } from 'nestjs-distributed-lock';
import request from 'supertest';
import { App } from 'supertest/types';
import { AppModule } from './../src/app.module';
import { ReportJob } from './../src/report.job';

/** Runs against the Redis at REDIS_URL, as the app does. */
describe('AppController (e2e)', () => {
  const apps: INestApplication<App>[] = [];

  async function start(): Promise<INestApplication<App>> {
    const moduleFixture: TestingModule = await Test.createTestingModule({
      imports: [AppModule],
    }).compile();
    const app = moduleFixture.createNestApplication<INestApplication<App>>();
    await app.init();
    apps.push(app);
    return app;
  }

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  it('/ (GET)', async () => {
    const app = await start();
    return request(app.getHttpServer())
      .get('/')
      .expect(200)
      .expect('Hello World!');
  });

  it('/health (GET) reports the lock store up', async () => {
    const app = await start();
    const answer = await request(app.getHttpServer())
      .get('/health')
      .expect(200);
    const body = answer.body as { info: { locks: unknown } };
    expect(body.info.locks).toMatchObject({
      status: 'up',
      evictionPolicy: 'noeviction',
    });
  });

  it('answers 409 to a second order on a busy id, then takes it again', async () => {
    const server = (await start()).getHttpServer();
    const [first, second] = await Promise.all([
      request(server).post('/orders/7'),
      request(server).post('/orders/7'),
    ]);
    expect([first.status, second.status].sort()).toEqual([201, 409]);
    const busy = first.status === 409 ? first : second;
    expect(busy.body).toMatchObject({ statusCode: 409, resource: 'order:7' });
    await request(server).post('/orders/7').expect(201);
  });

  it('locks a service method across two instances', async () => {
    const [one, two] = [
      (await start()).getHttpServer(),
      (await start()).getHttpServer(),
    ];
    const answers = await Promise.all(
      [one, two, one, two].map((server) =>
        request(server).post('/stock/sku-9'),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([
      201, 201, 201, 201,
    ]);
  });

  it('runs the cron job once per tick across every instance', async () => {
    await start();
    // Every instance started in this file runs the job on the same Redis.
    const jobs = apps.map((app) => app.get(ReportJob));
    const total = () => jobs.reduce((sum, job) => sum + job.runs, 0);
    const before = total();
    await new Promise((resolve) => setTimeout(resolve, 3_200));
    const runs = total() - before;
    // 3 or 4 ticks passed; without the lock each of the instances would run each one.
    expect(jobs.length).toBeGreaterThanOrEqual(4);
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(runs).toBeLessThanOrEqual(4);
  });

  it('/health stays up (terminus 11 has no degraded) when only fencing is refused', async () => {
    const redisUrl = process.env.REDIS_URL!;
    const admin = new Redis(redisUrl);
    // A user with every command but TIME, which only fences need.
    await admin.call(
      'ACL',
      'SETUSER',
      'nofence',
      'on',
      '>pw',
      '~*',
      '&*',
      '+@all',
      '-time',
    );
    process.env.REDIS_URL = `redis://nofence:pw@${new URL(redisUrl).host}`;
    try {
      const app = await start();
      const locks = app.get(LockService);
      await expect(
        locks.acquire('fenced', { fencing: true }),
      ).rejects.toMatchObject({
        code: 'LOCK_STORE_REFUSED',
        refused: 'time',
      });
      await (await locks.acquire('plain')).release();
      const answer = await request(app.getHttpServer())
        .get('/health')
        .expect(200);
      const body = answer.body as { status: string; info: { locks: unknown } };
      expect(body.status).toBe('ok');
      expect(body.info.locks).toMatchObject({
        status: 'up',
        refused: ['permission: time'],
        warning: expect.stringContaining('grant +time') as unknown,
      });
    } finally {
      process.env.REDIS_URL = redisUrl;
      await admin.call('ACL', 'DELUSER', 'nofence');
      admin.disconnect();
    }
  });
});
