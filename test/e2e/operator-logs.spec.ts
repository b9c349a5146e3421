import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import request from 'supertest';
import { reportFigures } from '../harness/figures.js';
import { useRedisServer } from '../harness/use-redis.js';
import { loopLag } from '../harness/loop-lag.js';
import { waitUntil } from '../harness/waits.js';
import { PLATFORMS, type Platform } from '../fixtures/decorator-app/http-app.js';
import { CapturingLogger } from '../harness/capturing-logger.js';
import { OpsAppModule } from '../fixtures/ops-app/ops-app.module.js';

describe.each(PLATFORMS)('what an operator reads in the logs (%s)', (platform: Platform) => {
  const redis = useRedisServer();
  let app: INestApplication;
  let url: string;
  let logger: CapturingLogger;

  beforeEach(async () => {
    logger = new CapturingLogger();
    const adapter = platform === 'express' ? new ExpressAdapter() : new FastifyAdapter();
    const module = OpsAppModule.register(redis.server.url, redis.probe);
    app = await NestFactory.create(module, adapter, { logger, abortOnError: false });
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    await app.close();
    await redis.probe.flushall();
  });

  it('logs nothing for a busy lock (409) or a bad key (400), and tells the client no internals', async () => {
    const held = request(url)
      .post('/ops/1/hold')
      .send({ ms: 300 })
      .then((r) => r);
    await waitUntil(
      'the lock to be held',
      async () => (await redis.probe.exists('lock:ops:1')) === 1,
    );
    const before = logger.at('warn').length;

    const busy = await request(url).post('/ops/1/take');
    const bad = await request(url).post('/ops/by-user').send({});

    expect(busy.status).toBe(409);
    expect(busy.body).toEqual({
      statusCode: 409,
      error: 'LOCK_BUSY',
      message: 'Resource "ops:1" is busy. Retry later.',
      resource: 'ops:1',
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ statusCode: 400, error: 'LOCK_KEY_INVALID' });
    for (const body of [busy.text, bad.text]) expect(body).not.toMatch(/OpsController|byUser|take/);
    expect(logger.at('warn').slice(before)).toEqual([]);
    expect((await held).status).toBe(201);
  });

  it('fails a call whose lock was lost with 503, and logs the loss once at WARN', async () => {
    const answer = await request(url).post('/ops/7/lose');

    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ error: 'LOCK_LOST', resource: 'ops:lost:7' });
    const warnings = logger.at('warn').filter((line) => line.text.includes('ops:lost:7'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 'warn' });
  });

  it('tells of a Redis outage once when it starts and once when it ends, and fails fast meanwhile', async () => {
    await request(url).post('/ops/2/take').expect(201);
    await redis.server.stop();
    const lag = loopLag();
    const latencies: number[] = [];
    try {
      // The client notices the closed connection first; then every call fails at once.
      await waitUntil(
        'the outage to be seen',
        async () => (await request(url).post('/ops/2/take')).status === 503,
      );
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const answer = await request(url).post('/ops/2/take');
        latencies.push(performance.now() - started);
        expect(answer.status).toBe(503);
        expect(answer.text).not.toMatch(/127\.0\.0\.1|redis:\/\//);
      }
    } finally {
      await redis.server.restart();
    }
    const backAt = performance.now();
    await waitUntil(
      'locks to work again',
      async () => (await request(url).post('/ops/2/take')).status === 201,
      5_000,
      20,
    );
    const recoveredMs = performance.now() - backAt;
    const slack = lag.stop();

    reportFigures(`${platform} outage`, {
      wait0LatencyMs: latencies.map((ms) => Math.round(ms)),
      recoveredMs: Math.round(recoveredMs),
      lines: logger.at('warn').map((line) => line.text.slice(0, 80)),
    });
    expect(Math.max(...latencies)).toBeLessThan(100 + slack);
    expect(recoveredMs).toBeLessThan(1_000 + slack);
    const down = logger.lines.filter((line) => /stopped answering/.test(line.text));
    const up = logger.lines.filter((line) => /answers again/.test(line.text));
    expect(down).toHaveLength(1);
    expect(down[0]!.level).toBe('error');
    expect(up).toHaveLength(1);
    // Nothing else at ERROR: no stack trace per 503.
    expect(logger.at('error')).toEqual(down);
  }, 30_000);
});
