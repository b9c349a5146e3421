import { adminCall, parseInfo } from './redis-admin.js';
import { isRunning } from './redis-process.js';
import { RedisSentinelSet } from './redis-sentinel.js';
import { sentinelReplicas } from './sentinel-queries.js';
import { reportTiming } from './timings.js';
import { waitUntil } from './waits.js';

/** The flags one sentinel reports for the replica on `port`. */
async function replicaFlags(sentinelPort: number, port: number): Promise<string | undefined> {
  const replicas = await sentinelReplicas(sentinelPort, 'mymaster');
  return replicas?.find((replica) => replica.port === String(port))?.flags;
}

describe('RedisSentinelSet', () => {
  let set: RedisSentinelSet;

  beforeAll(async () => {
    set = await RedisSentinelSet.start({ replicas: 1, sentinels: 3 });
    reportTiming('sentinel set startup', set.startupMs);
  }, 30_000);

  afterAll(async () => {
    const pids = set?.processes.map((node) => node.pid) ?? [];
    await set?.stop();
    expect(pids.filter(isRunning)).toEqual([]);
  });

  it('starts a master, a linked replica and sentinels that agree on both', async () => {
    expect(set.sentinels).toHaveLength(3);
    for (const { port } of set.sentinels) {
      const address = await adminCall(port, ['SENTINEL', 'get-master-addr-by-name', 'mymaster']);
      expect(address).toEqual(['127.0.0.1', String(set.master.port)]);
      expect(await adminCall(port, ['SENTINEL', 'ckquorum', 'mymaster'])).toMatch(/^OK/);
      expect(await replicaFlags(port, set.replica.port)).toBe('slave');
    }
    const replication = parseInfo(await adminCall(set.replica.port, ['INFO', 'replication']));
    expect(replication).toMatchObject({ role: 'slave', master_link_status: 'up' });
  });

  it('gives a sentinel-mode client connected to the master', async () => {
    const client = set.client();
    try {
      await client.set('k', 'v');
      expect(parseInfo(await client.info('server')).tcp_port).toBe(String(set.master.port));
    } finally {
      client.disconnect();
    }
  });

  it('stops and restarts the replica, as the sentinels observe', async () => {
    const sentinel = set.sentinels[0]!.port;
    await set.stopReplica();
    expect(set.replica.alive).toBe(false);
    await waitUntil('replica seen down', async () =>
      (await replicaFlags(sentinel, set.replica.port))?.includes('s_down'),
    );
    await set.startReplica();
    await waitUntil('replica seen up again', async () =>
      (await replicaFlags(sentinel, set.replica.port)) === 'slave' ? true : undefined,
    );
  }, 15_000);

  it('promotes the replica when the master is killed', async () => {
    const client = set.client();
    try {
      await client.set('survivor', 'yes');
      await waitUntil('write replicated', async () => (await client.wait(1, 500)) === 1);
      const replicaPort = set.replica.port;

      await set.killMaster();
      const { master, elapsedMs } = await set.waitForFailover(20_000);
      reportTiming('sentinel failover', elapsedMs);

      expect(master.port).toBe(replicaPort);
      expect(elapsedMs).toBeLessThan(20_000);
      expect(parseInfo(await adminCall(master.port, ['INFO', 'replication'])).role).toBe('master');
      // The existing client follows the sentinels to the new master.
      const value = await waitUntil('client to reach the new master', () =>
        client.get('survivor').catch(() => undefined),
      );
      expect(value).toBe('yes');
    } finally {
      client.disconnect();
    }
  }, 30_000);
});
