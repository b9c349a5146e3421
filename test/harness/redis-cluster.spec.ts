import { Redis } from 'ioredis';
import { adminCall, parseInfo } from './redis-admin.js';
import { RedisCluster } from './redis-cluster.js';
import { isRunning } from './redis-process.js';
import { reportTiming } from './timings.js';

describe('RedisCluster', () => {
  describe('3 masters, 1 replica each', () => {
    let cluster: RedisCluster;
    let client: ReturnType<RedisCluster['client']> | undefined;

    beforeAll(async () => {
      cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 1 });
      reportTiming('cluster 3+3 startup', cluster.startupMs);
    }, 30_000);

    afterAll(async () => {
      client?.disconnect();
      const pids = cluster?.nodes.map((node) => node.pid) ?? [];
      await cluster?.stop();
      expect(pids.filter(isRunning)).toEqual([]);
    });

    it('starts every node healthy: all slots covered, replicas attached', async () => {
      expect(cluster.nodes.filter((node) => node.role === 'master')).toHaveLength(3);
      expect(cluster.nodes.filter((node) => node.role === 'replica')).toHaveLength(3);
      for (const { port } of cluster.nodes) {
        const info = parseInfo(await adminCall(port, ['CLUSTER', 'INFO']));
        expect(info).toMatchObject({ cluster_state: 'ok', cluster_slots_ok: '16384' });
      }
      for (const { port } of cluster.nodes.filter((node) => node.role === 'replica')) {
        const info = parseInfo(await adminCall(port, ['INFO', 'replication']));
        expect(info).toMatchObject({ role: 'slave', master_link_status: 'up' });
      }
    });

    it('serves keys in every slot range through the ioredis Cluster client', async () => {
      client = cluster.client();
      const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
      for (const key of keys) await client.set(key, `value-${key}`);
      expect(await Promise.all(keys.map((key) => client!.get(key)))).toEqual(
        keys.map((key) => `value-${key}`),
      );
      const owners = await Promise.all(keys.map((key) => cluster.masterForKey(key)));
      expect(new Set(owners.map((owner) => owner.port)).size).toBe(3);
    });

    it('names the master that really owns a key (it answers without MOVED)', async () => {
      const master = await cluster.masterForKey('{lock}:a');
      expect(master.role).toBe('master');
      expect(await adminCall(master.port, ['SET', '{lock}:a', '1'])).toBe('OK');
      const other = cluster.nodes.find(
        (node) => node.role === 'master' && node.port !== master.port,
      )!;
      await expect(adminCall(other.port, ['GET', '{lock}:a'])).rejects.toThrow(/MOVED/);
    });

    it('fails a killed master over to its replica within seconds', async () => {
      const key = '{failover}:key';
      const old = await cluster.masterForKey(key);
      // Replicated before the crash, so the promoted replica must still have it.
      const direct = new Redis({ host: '127.0.0.1', port: old.port, lazyConnect: true });
      await direct.connect();
      await direct.set(key, 'survives');
      expect(await direct.wait(1, 2_000)).toBe(1);
      direct.disconnect();

      await cluster.kill(old.port);
      const { master, elapsedMs } = await cluster.waitForFailover(key, 15_000);
      reportTiming('cluster failover', elapsedMs);

      expect(master.port).not.toBe(old.port);
      expect(master.role).toBe('master');
      expect(elapsedMs).toBeGreaterThan(0);
      expect(elapsedMs).toBeLessThan(15_000);
      expect((await cluster.masterForKey(key)).port).toBe(master.port);
      expect(await adminCall(master.port, ['GET', key])).toBe('survives');
      expect(await client!.get(key)).toBe('survives');
    }, 20_000);
  });

  it('starts 3 masters without replicas', async () => {
    const cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 0 });
    try {
      reportTiming('cluster 3+0 startup', cluster.startupMs);
      expect(cluster.nodes.map((node) => node.role)).toEqual(['master', 'master', 'master']);
      const client = cluster.client();
      await client.set('x', '1');
      expect(await client.get('x')).toBe('1');
      client.disconnect();
    } finally {
      await cluster.stop();
    }
    expect(cluster.nodes.filter((node) => node.alive)).toEqual([]);
  }, 30_000);
});
