import { INestApplication } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import request from 'supertest';
import { App } from 'supertest/types.js';
import { AppModule } from './../src/app.module.js';
import { ReportJob } from './../src/report.job.js';

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

  it('answers 409 to a second order on a busy id, then takes it again', async () => {
    const server = (await start()).getHttpServer();
    const [first, second] = await Promise.all([
      request(server).post('/orders/7'),
      request(server).post('/orders/7'),
    ]);
    expect([first.status, second.status].sort((a, b) => a - b)).toEqual([
      201, 409,
    ]);
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
});
