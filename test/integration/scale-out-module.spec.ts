import { Test, type TestingModule } from '@nestjs/testing';
import type { Cluster, Redis } from 'ioredis';
import { LockOptionsError } from '../../lib/errors/lock.errors.js';
import type { LockModuleOptions } from '../../lib/nest/interfaces/lock-module-options.interface.js';
import { LockModule } from '../../lib/nest/lock.module.js';
import { LockService } from '../../lib/nest/lock.service.js';
import { adminCall, connectionCount } from '../harness/redis-admin.js';
import { RedisCluster } from '../harness/redis-cluster.js';
import { startRedisFleet, type RedisFleet } from '../harness/redis-fleet.js';
import { RedisSentinelSet } from '../harness/redis-sentinel.js';
import { allClosed, socketsOpenedBy } from '../harness/opened-sockets.js';
import { waitUntil } from '../harness/waits.js';

/** What the lock key holds on the node(s) that serve it: one value per node. */
type KeyReader = (key: string) => Promise<unknown[]>;

describe('LockModule.forRoot on a cluster, sentinels and Redlock nodes', () => {
  let cluster: RedisCluster;
  let sentinels: RedisSentinelSet;
  let fleet: RedisFleet;
  const apps: TestingModule[] = [];
  const clients: (Redis | Cluster)[] = [];

  async function start(options: LockModuleOptions): Promise<TestingModule> {
    const app = await Test.createTestingModule({
      imports: [LockModule.forRoot(options)],
    }).compile();
    apps.push(app);
    return app.init();
  }

  async function close(app: TestingModule): Promise<void> {
    apps.splice(apps.indexOf(app), 1);
    await app.close();
  }

  /**
   * Locks through the service with a second caller queued behind, so the module also opens its
   * release-notification connection; checks the key while held and after. A fenced caller
   * (`fenced`, not on Redlock) needs a fence of its own, so it cannot be handed the key by the
   * release: it waits for the notification and tries.
   */
  async function exercise(locks: LockService, read: KeyReader, fenced = true): Promise<void> {
    const lock = await locks.acquire('wiring', { ttl: 10_000 });
    const queued = locks.acquire('wiring', { ttl: 10_000, wait: 5_000, fencing: fenced });
    expect(new Set(await read('lock:wiring'))).toEqual(new Set([lock.token]));
    expect(await lock.release()).toBe('released');
    expect(await (await queued).release()).toBe('released');
    expect(new Set(await read('lock:wiring'))).toEqual(new Set([null]));
  }

  /** Waits for the servers' connection count to settle back to `expected` (closes are async). */
  async function expectConnections(ports: readonly number[], expected: number): Promise<void> {
    await waitUntil(
      `connections on ${ports.join(', ')} back to ${expected}`,
      async () => (await connectionCount(ports)) === expected,
      3_000,
      25,
    ).catch(() => undefined);
    expect(await connectionCount(ports)).toBe(expected);
  }

  const onClusterMaster: KeyReader = async (key) => {
    const { port } = await cluster.masterForKey(key);
    return [await adminCall(port, ['GET', key])];
  };
  const onEveryRedlockNode: KeyReader = (key) =>
    Promise.all(fleet.ports.map((port) => adminCall(port, ['GET', key])));
  const clusterPorts = (): number[] => cluster.nodes.map((node) => node.port);

  beforeAll(async () => {
    const [clustered, watched, independent] = await Promise.allSettled([
      RedisCluster.start({ masters: 3, replicasPerMaster: 0 }),
      RedisSentinelSet.start({ replicas: 1, sentinels: 3 }),
      startRedisFleet(3),
    ]);
    // Kept even when another failed to start, so that afterAll stops it.
    if (clustered.status === 'fulfilled') cluster = clustered.value;
    if (watched.status === 'fulfilled') sentinels = watched.value;
    if (independent.status === 'fulfilled') fleet = independent.value;
    for (const result of [clustered, watched, independent]) {
      if (result.status === 'rejected') throw result.reason;
    }
  }, 40_000);

  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    for (const client of clients.splice(0)) client.disconnect();
  });

  afterAll(async () => {
    await Promise.all([cluster?.stop(), sentinels?.stop(), fleet?.stopAll()]);
  });

  it('{ redis: clusterClient } locks on the cluster and leaves the client open', async () => {
    const user = cluster.client();
    clients.push(user);
    await user.ping();
    // Connected to every master up front, so only the module's own connections come and go.
    await Promise.all(user.nodes('master').map((node) => node.ping()));
    const before = await connectionCount(clusterPorts());

    const app = await start({ redis: user });
    await exercise(app.get(LockService), onClusterMaster);
    const during = await connectionCount(clusterPorts());
    await close(app);

    expect(during).toBeGreaterThan(before);
    expect(user.status).toBe('ready');
    expect(await user.ping()).toBe('PONG');
    await expectConnections(clusterPorts(), before);
  });

  it('{ redis: { cluster: [one node] } } finds the other masters and closes what it opened', async () => {
    const before = await connectionCount(clusterPorts());
    const [seed] = cluster.nodes;

    const app = await start({ redis: { cluster: [{ host: '127.0.0.1', port: seed!.port }] } });
    await exercise(app.get(LockService), onClusterMaster);
    const during = await connectionCount(clusterPorts());
    await close(app);

    expect(during).toBeGreaterThan(before);
    await expectConnections(clusterPorts(), before);
  });

  it('{ redis: { sentinels, name } } locks on the master and closes what it opened', async () => {
    const dataPorts = [sentinels.master.port, sentinels.replica.port];
    const before = await connectionCount(dataPorts);

    const app = await start({
      redis: { sentinels: sentinels.sentinels, name: sentinels.masterName },
    });
    await exercise(app.get(LockService), async (key) => [
      await adminCall(sentinels.master.port, ['GET', key]),
    ]);
    const during = await connectionCount(dataPorts);
    await close(app);

    expect(during).toBeGreaterThan(before);
    await expectConnections(dataPorts, before);
  });

  it('{ redlock: urls } locks on every node and closes what it opened', async () => {
    const before = await connectionCount(fleet.ports);

    const app = await start({ redlock: fleet.servers.map((server) => server.url) });
    await exercise(app.get(LockService), onEveryRedlockNode, false);
    const during = await connectionCount(fleet.ports);
    await close(app);

    expect(during).toBeGreaterThan(before);
    await expectConnections(fleet.ports, before);
  });

  it('{ redlock: [client, ...urls] } leaves the client of the user open', async () => {
    const user = fleet.servers[0]!.client();
    clients.push(user);
    await user.ping();
    const before = await connectionCount(fleet.ports);

    const app = await start({
      redlock: [user, ...fleet.servers.slice(1).map((server) => server.url)],
    });
    await exercise(app.get(LockService), onEveryRedlockNode, false);
    await close(app);

    expect(user.status).toBe('ready');
    expect(await user.ping()).toBe('PONG');
    await expectConnections(fleet.ports, before);
  });

  it('rejects replicas (WAIT) with a cluster at bootstrap, leaving no connection open', async () => {
    const before = await connectionCount(clusterPorts());
    const [seed] = cluster.nodes;

    const { settled, sockets } = await socketsOpenedBy(() =>
      start({
        redis: { cluster: [{ host: '127.0.0.1', port: seed!.port }] },
        replicas: { count: 1 },
      }),
    );

    expect(settled.error).toBeInstanceOf(LockOptionsError);
    expect((settled.error as Error).message).toMatch(/not available on Redis Cluster/);
    // Whatever the bootstrap connected, it closed again: each socket's close is awaited.
    await allClosed(sockets);
    expect(await connectionCount(clusterPorts())).toBe(before);
  });
});
