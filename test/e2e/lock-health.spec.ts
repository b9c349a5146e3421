import type { INestApplicationContext } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { LockHealthIndicator } from '../../lib/health/index.js';
import type { LockModuleOptions } from '../../lib/nest/interfaces/lock-module-options.interface.js';
import type { Redis } from 'ioredis';
import { LOCK_REDIS_CLIENT } from '../../lib/index.js';
import { LockModule } from '../../lib/nest/lock.module.js';
import { MemoryLockStore } from '../../lib/stores/memory/memory-lock.store.js';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import { ForwardingStore } from '../harness/forwarding-store.js';
import { useRedisCluster } from '../harness/redis-cluster.js';
import { startRedisFleet, type RedisFleet } from '../harness/redis-fleet.js';
import { RedisServer } from '../harness/redis-server.js';
import { waitUntil } from '../harness/waits.js';

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
      expect(result.locks).toEqual({
        status: 'down',
        message: 'not connected: the connection closed',
      });
    });

    it('reads the eviction policy from INFO for an ACL user refused CONFIG', async () => {
      const admin = own(server.client());
      await admin.acl('SETUSER', 'locks', 'on', '>secret', '~*', '&*', '+@all', '-config');
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
      const health = await indicator({ redis: `redis://locks:secret@127.0.0.1:${server.port}` });
      const result = await health.isHealthy('locks');
      expect(result.locks).toMatchObject({ status: 'degraded', evictionPolicy: 'allkeys-lru' });
    });

    it('is up, with the eviction policy unknown and said so, for a user refused CONFIG and INFO', async () => {
      const admin = own(server.client());
      await admin.acl('SETUSER', 'locks', 'on', '>secret', '~*', '&*', '+@all', '-config', '-info');
      const health = await indicator({ redis: `redis://locks:secret@127.0.0.1:${server.port}` });
      const result = await health.isHealthy('locks');
      expect(result).toEqual({
        locks: {
          status: 'up',
          rtt: expect.any(Number),
          evictionPolicy: 'unknown',
          warning: expect.stringContaining('cannot verify the eviction policy'),
        },
      });
    });

    it('times the ping of a custom store without health(), and injects no client it lacks', async () => {
      const store = new ForwardingStore(new RedisLockStore(own(server.client())));
      const moduleRef = await start({ store });
      const health = moduleRef.get(LockHealthIndicator);
      expect(moduleRef.get(LOCK_REDIS_CLIENT)).toBeUndefined();
      expect(await health.isHealthy('locks')).toEqual({
        locks: { status: 'up', rtt: expect.any(Number) },
      });
      server.pause();
      const paused = await health.isHealthy('locks', { timeout: 300 });
      server.resume();
      expect(paused.locks).toEqual({ status: 'down', message: 'no answer within 300 ms' });
    });

    it("injects a custom store's own client as LOCK_REDIS_CLIENT", async () => {
      const client = own(server.client());
      class SharingStore extends ForwardingStore {
        readonly client = client;
      }
      const moduleRef = await start({ store: new SharingStore(new RedisLockStore(client)) });
      expect(moduleRef.get(LOCK_REDIS_CLIENT)).toBe(client);
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

  describe('on the memory store', () => {
    it('is up, with nothing to evict', async () => {
      const health = await indicator({ store: new MemoryLockStore() });
      expect(await health.isHealthy('locks')).toEqual({ locks: { status: 'up', rtt: 0 } });
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
      expect(twoDown.locks).toEqual({
        status: 'up',
        rtt: expect.any(Number),
        nodesUp: 3,
        nodes: 5,
        quorum: 3,
        evictionPolicy: 'noeviction',
      });
      await fleet.servers[2].stop();
      const threeDown = await health.isHealthy('locks', { timeout: 300 });
      expect(threeDown.locks).toEqual({
        status: 'down',
        message: expect.stringContaining('2 of 5 nodes answered, below the quorum of 3'),
        nodesUp: 2,
        nodes: 5,
        quorum: 3,
        evictionPolicy: 'noeviction',
      });
      for (const port of fleet.ports.slice(0, 3)) {
        expect(threeDown.locks.message).toContain(`127.0.0.1:${port} (`);
      }
      expect(threeDown.locks.message).not.toContain(`127.0.0.1:${fleet.ports[3]}`);
    });
  });

  describe('on Redlock over 3 nodes', () => {
    let fleet: RedisFleet;
    beforeAll(async () => {
      fleet = await startRedisFleet(3);
    });
    afterAll(() => fleet?.stopAll());

    it('reports a node whose eviction policy can drop its vote, and one that will not say', async () => {
      const health = await indicator({ redlock: fleet.clients().map(own) });
      const [evicting, refusing] = fleet.servers.map((server) => own(server.client()));
      await evicting!.config('SET', 'maxmemory-policy', 'volatile-lru');
      const result = await health.isHealthy('locks');
      expect(result.locks).toMatchObject({
        status: 'degraded',
        nodesUp: 3,
        quorum: 2,
        evictionPolicy: 'volatile-lru',
        warning: expect.stringContaining('noeviction'),
      });
      await evicting!.config('SET', 'maxmemory-policy', 'noeviction');
      // One node refuses CONFIG and INFO: the policy of the nodes is then unknown.
      await refusing!.acl('SETUSER', 'default', '-config', '-info');
      expect((await health.isHealthy('locks')).locks).toMatchObject({
        status: 'up',
        evictionPolicy: 'unknown',
      });
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

  describe('on a Redis Cluster that loses a master without replicas', () => {
    const redis = useRedisCluster();

    it('is down with cluster_state fail once the other nodes mark it failed', async () => {
      const health = await indicator({ redis: own(redis.cluster.client()) });
      expect((await health.isHealthy('locks')).locks.clusterState).toBe('ok');
      await redis.cluster.kill(redis.cluster.nodes[0]!.port);
      // Each check asks a node of the client's choice: one that answers says the cluster failed.
      const failed = await waitUntil(
        'a live node to report the cluster failed',
        async () => {
          const { locks } = await health.isHealthy('locks', { timeout: 300 });
          return locks.clusterState === 'fail' && locks;
        },
        10_000,
        100,
      );
      expect(failed).toMatchObject({
        status: 'down',
        message: 'cluster_state is fail',
        rtt: expect.any(Number),
      });
    });
  });
});
