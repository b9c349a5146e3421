import type { INestApplicationContext } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { LockHealthIndicator } from '../../lib/health/index.js';
import type { LockModuleOptions } from '../../lib/nest/interfaces/lock-module-options.interface.js';
import type { Redis } from 'ioredis';
import { LOCK_REDIS_CLIENT } from '../../lib/index.js';
import { LockModule } from '../../lib/nest/lock.module.js';
import { useRedisCluster } from '../harness/redis-cluster.js';
import { startRedisFleet, type RedisFleet } from '../harness/redis-fleet.js';
import { RedisServer } from '../harness/redis-server.js';
import { waitUntil } from '../harness/wait-until.js';

describe('LockHealthIndicator (terminus)', () => {
  const apps: INestApplicationContext[] = [];
  /** Clients the test made (the module leaves a client it was given open). */
  const clients: { disconnect(): void }[] = [];
  const own = <T extends { disconnect(): void }>(client: T): T => {
    clients.push(client);
    return client;
  };

  async function start(options: LockModuleOptions): Promise<INestApplicationContext> {
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule, LockModule.forRoot({ ...options, logger: false })],
      providers: [LockHealthIndicator],
    }).compile();
    apps.push(await moduleRef.init());
    return moduleRef;
  }

  const indicator = async (options: LockModuleOptions): Promise<LockHealthIndicator> =>
    (await start(options)).get(LockHealthIndicator);

  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    clients.splice(0).forEach((client) => client.disconnect());
  });

  describe('on one Redis server', () => {
    let server: RedisServer;
    beforeEach(async () => {
      server = await RedisServer.start();
    });
    afterEach(() => server.stop());

    it('is up against a live Redis, with its round trip and eviction policy', async () => {
      const health = await indicator({ redis: server.url });
      const result = await health.isHealthy('locks');
      expect(result).toEqual({
        locks: { status: 'up', rtt: expect.any(Number), evictionPolicy: 'noeviction' },
      });
    });

    it('is down within its timeout when Redis stops, or stops answering', async () => {
      const health = await indicator({ redis: server.url });
      server.pause();
      let startedAt = performance.now();
      const paused = await health.isHealthy('locks', { timeout: 300 });
      expect(performance.now() - startedAt).toBeLessThan(800);
      expect(paused.locks.status).toBe('down');
      server.resume();
      await server.stop();
      startedAt = performance.now();
      const stopped = await health.isHealthy('locks', { timeout: 300 });
      expect(performance.now() - startedAt).toBeLessThan(800);
      expect(stopped.locks).toMatchObject({ status: 'down', message: expect.any(String) });
    });

    it('is down at once, without waiting for its timeout, once the client knows Redis is gone', async () => {
      const moduleRef = await start({ redis: server.url });
      const health = moduleRef.get(LockHealthIndicator);
      const client = moduleRef.get<Redis>(LOCK_REDIS_CLIENT);
      expect((await health.isHealthy('locks')).locks.status).toBe('up');
      await server.stop();
      await waitUntil('the client is reconnecting', () => client.status === 'reconnecting');

      const startedAt = performance.now();
      const result = await health.isHealthy('locks', { timeout: 5_000 });

      expect(performance.now() - startedAt).toBeLessThan(100);
      expect(result.locks).toEqual({ status: 'down', message: 'not connected (reconnecting)' });
    });

    it('reports an eviction policy that can drop lock keys', async () => {
      const health = await indicator({ redis: server.url });
      await own(server.client()).config('SET', 'maxmemory-policy', 'allkeys-lru');
      const result = await health.isHealthy('locks');
      expect(result.locks).toMatchObject({
        status: 'degraded',
        evictionPolicy: 'allkeys-lru',
        warning: expect.stringContaining('noeviction'),
      });
    });
  });

  describe('on Redlock over 5 nodes', () => {
    let fleet: RedisFleet;
    beforeAll(async () => {
      fleet = await startRedisFleet(5);
    });
    afterAll(() => fleet?.stopAll());

    it('is up with 2 of 5 nodes down, and down with 3 of 5 down', async () => {
      const health = await indicator({ redlock: fleet.clients().map(own) });
      await fleet.servers[0].stop();
      await fleet.servers[1].stop();
      const twoDown = await health.isHealthy('locks', { timeout: 300 });
      expect(twoDown.locks).toEqual({ status: 'up', nodesUp: 3, nodes: 5, quorum: 3 });
      await fleet.servers[2].stop();
      const threeDown = await health.isHealthy('locks', { timeout: 300 });
      expect(threeDown.locks).toEqual({ status: 'down', nodesUp: 2, nodes: 5, quorum: 3 });
    });
  });

  describe('on a 3-master Redis Cluster', () => {
    const redis = useRedisCluster();

    it('is up with the cluster state', async () => {
      const health = await indicator({ redis: own(redis.cluster.client()) });
      const result = await health.isHealthy('locks');
      expect(result.locks).toMatchObject({ status: 'up', clusterState: 'ok' });
    });
  });
});
