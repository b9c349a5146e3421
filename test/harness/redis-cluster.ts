import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, type ClusterOptions } from 'ioredis';
import { parseClusterNodes, slotOwner } from './cluster-nodes.js';
import {
  agreedSlotOwner,
  clusterNodeArgs,
  createCluster,
  isClusterHealthy,
} from './cluster-setup.js';
import { adminCall, infoOf } from './redis-admin.js';
import { freePorts, RedisProcess } from './redis-process.js';
import { waitUntil } from './waits.js';
import { expectEveryLockKeyToExpire } from './key-expiry.js';
import { DROPPED_AT_ONCE } from './redis-server.js';

export type ClusterRole = 'master' | 'replica';

export interface ClusterNode {
  readonly port: number;
  readonly pid: number;
  /** As last observed: refreshed by start() and waitForFailover(). */
  readonly role: ClusterRole;
  readonly alive: boolean;
}

export interface RedisClusterOptions {
  masters?: number;
  replicasPerMaster?: 0 | 1;
  /** Small, so a killed master is failed over within a few seconds. */
  nodeTimeoutMs?: number;
}

export interface FailoverResult {
  master: ClusterNode;
  /** From the last kill() (or from the call, without one) to a healthy cluster again. */
  elapsedMs: number;
}

/** A throwaway Redis Cluster on loopback: one redis-server per node, in its own temp dir. */
export class RedisCluster {
  private readonly members: { server: RedisProcess; role: ClusterRole }[] = [];
  private lastKillAt?: number;
  /** Wall time from start() to a healthy cluster, for reports. */
  startupMs = 0;

  private constructor(private readonly dir: string) {}

  static async start(options: RedisClusterOptions = {}): Promise<RedisCluster> {
    const { masters = 3, replicasPerMaster = 0, nodeTimeoutMs = 1_000 } = options;
    const began = performance.now();
    const size = masters * (1 + replicasPerMaster);
    const cluster = new RedisCluster(await mkdtemp(join(tmpdir(), 'redis-cluster-')));
    try {
      // A client port and a cluster bus port per node.
      const ports = await freePorts(2 * size);
      for (let i = 0; i < size; i++) {
        const args = clusterNodeArgs(cluster.dir, ports[i]!, ports[size + i]!, nodeTimeoutMs);
        cluster.members.push({
          server: RedisProcess.spawn('redis-server', ports[i]!, args),
          role: 'master',
        });
      }
      await Promise.all(cluster.members.map((member) => member.server.ready()));
      await createCluster(ports.slice(0, size), replicasPerMaster);
      const replicas = masters * replicasPerMaster;
      const healthy = () => isClusterHealthy(ports.slice(0, size), replicas);
      await waitUntil('cluster_state:ok everywhere, replicas linked', healthy, 20_000, 50);
      await cluster.refreshRoles();
      cluster.startupMs = performance.now() - began;
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  get nodes(): ClusterNode[] {
    return this.members.map(({ server, role }) => ({
      port: server.port,
      pid: server.pid,
      role,
      alive: server.alive,
    }));
  }

  /** A cluster client on the live nodes; the caller closes it. `options` override defaults. */
  client(options: ClusterOptions = {}): Cluster {
    const startupNodes = this.livePorts().map((port) => ({ host: '127.0.0.1', port }));
    const client = new Cluster(startupNodes, {
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      slotsRefreshTimeout: 1_000,
      ...options,
      // Fail fast on a dead node instead of queueing for the default 20 retries.
      redisOptions: {
        maxRetriesPerRequest: 1,
        connectTimeout: 1_000,
        ...DROPPED_AT_ONCE,
        ...options.redisOptions,
      },
    });
    client.on('error', () => undefined);
    return client;
  }

  /** The hash slot of `key`, as the cluster computes it (CRC16 of the hash tag or key). */
  async slotOf(key: string): Promise<number> {
    return Number(await adminCall(this.liveNode().port, ['CLUSTER', 'KEYSLOT', key]));
  }

  /** The node currently serving `key` as master, as seen by a live node. */
  async masterForKey(key: string): Promise<ClusterNode> {
    const slot = await this.slotOf(key);
    const view = parseClusterNodes(await adminCall(this.liveNode().port, ['CLUSTER', 'NODES']));
    const owner = slotOwner(view, slot);
    const node = this.nodes.find((candidate) => candidate.port === owner?.port);
    if (!node) throw new Error(`no master serves slot ${slot}`);
    return node;
  }

  /** SIGKILL, as a crash: no failover is requested, the cluster has to detect it. */
  async kill(port: number): Promise<void> {
    const member = this.members.find(({ server }) => server.port === port);
    if (!member) throw new Error(`port ${port} is not a node of this cluster`);
    await member.server.kill();
    this.lastKillAt = performance.now();
  }

  /** Resolves once a live master serves the slot, all live nodes agree and say cluster_state:ok. */
  async waitForFailover(slotOrKey: number | string, timeoutMs = 15_000): Promise<FailoverResult> {
    const since = this.lastKillAt ?? performance.now();
    const slot = typeof slotOrKey === 'number' ? slotOrKey : await this.slotOf(slotOrKey);
    const port = await waitUntil(
      `a live master for slot ${slot} and cluster_state:ok`,
      () => agreedSlotOwner(this.livePorts(), slot),
      timeoutMs,
      50,
    );
    const elapsedMs = performance.now() - since;
    await this.refreshRoles();
    return { master: this.nodes.find((node) => node.port === port)!, elapsedMs };
  }

  /** Kills every node this cluster started and removes its temp dir. */
  /** Stops every node; fails, once they are gone, if the library left a key without an expiry. */
  async stop(): Promise<void> {
    const live = this.members.filter(({ server }) => server.alive);
    const leftovers = expectEveryLockKeyToExpire(live.map(({ server }) => server.port));
    await leftovers.catch(() => undefined);
    await Promise.all(this.members.map(({ server }) => server.kill()));
    await rm(this.dir, { recursive: true, force: true });
    await leftovers;
  }

  private liveNode(): ClusterNode {
    const node = this.nodes.find((candidate) => candidate.alive);
    if (!node) throw new Error('every node of this cluster is down');
    return node;
  }

  private livePorts(): number[] {
    return this.nodes.filter((node) => node.alive).map((node) => node.port);
  }

  private async refreshRoles(): Promise<void> {
    for (const member of this.members) {
      if (!member.server.alive) continue;
      const role = (await infoOf(member.server.port, 'replication'))?.role;
      if (role) member.role = role === 'master' ? 'master' : 'replica';
    }
  }
}

/**
 * A throwaway Redis Cluster for the enclosing `describe`: `beforeAll` starts it (3 masters, no
 * replicas unless `options` says otherwise), `afterAll` stops it. Read `.cluster` in hooks and
 * tests.
 */
export function useRedisCluster(options: RedisClusterOptions = {}): {
  readonly cluster: RedisCluster;
} {
  let cluster: RedisCluster | undefined;
  beforeAll(async () => {
    cluster = await RedisCluster.start({ masters: 3, replicasPerMaster: 0, ...options });
  }, 30_000);
  afterAll(() => cluster?.stop());
  return {
    get cluster() {
      if (!cluster) throw new Error('the cluster is not there: read it in a hook or a test');
      return cluster;
    },
  };
}
