import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { infoOf } from './redis-admin.js';
import { freePorts, RedisProcess } from './redis-process.js';
import { sentinelMasterPort, sentinelReady } from './sentinel-queries.js';
import { waitUntil } from './waits.js';
import { expectEveryLockKeyToExpire } from './key-expiry.js';

export interface RedisSentinelSetOptions {
  replicas?: number;
  sentinels?: number;
  /** How long a silent master takes to be considered down (SDOWN). */
  downAfterMs?: number;
  /** Also the retry delay (twice this) when an election fails, so kept small. */
  failoverTimeoutMs?: number;
}

export interface SentinelFailover {
  /** The promoted node, one of `replicas`. */
  master: RedisProcess;
  /** From the last killMaster() (or from the call, without one) to every sentinel agreeing. */
  elapsedMs: number;
}

/** A master, its replicas and a quorum of sentinels watching them, all on loopback. */
export class RedisSentinelSet {
  readonly masterName = 'mymaster';
  /** Wall time from start() to sentinels agreeing on a quorum, for reports. */
  startupMs = 0;
  private readonly spawned: RedisProcess[] = [];
  private dataNodes: RedisProcess[] = [];
  private sentinelNodes: RedisProcess[] = [];
  private masterPort = 0;
  private lastKillAt?: number;

  private constructor(private readonly dir: string) {}

  static async start(options: RedisSentinelSetOptions = {}): Promise<RedisSentinelSet> {
    const { replicas = 1, sentinels = 3, downAfterMs = 1_000, failoverTimeoutMs = 3_000 } = options;
    const began = performance.now();
    const set = new RedisSentinelSet(await mkdtemp(join(tmpdir(), 'redis-sentinel-')));
    try {
      const [masterPort, ...ports] = await freePorts(1 + replicas + sentinels);
      set.masterPort = masterPort!;
      set.dataNodes = [await set.spawnDataNode(masterPort!)];
      for (const port of ports.slice(0, replicas)) {
        set.dataNodes.push(await set.spawnDataNode(port, masterPort));
      }
      // Sentinels list replicas from the master's INFO, so they start once replicas are linked.
      await waitUntil('replicas to link to the master', () => set.replicasLinked(), 10_000, 25);
      const quorum = Math.floor(sentinels / 2) + 1;
      for (const port of ports.slice(replicas)) {
        const config = [`port ${port}`, 'bind 127.0.0.1', `dir "${set.dir}"`];
        config.push('sentinel resolve-hostnames no');
        config.push(`sentinel monitor ${set.masterName} 127.0.0.1 ${masterPort} ${quorum}`);
        config.push(`sentinel down-after-milliseconds ${set.masterName} ${downAfterMs}`);
        config.push(`sentinel failover-timeout ${set.masterName} ${failoverTimeoutMs}`);
        set.sentinelNodes.push(await set.spawnWithConfig('redis-sentinel', port, config));
      }
      // Sentinels find each other through hello messages sent every 2 s.
      const ready = () => set.sentinelsReady();
      await waitUntil('sentinels to see replicas and reach quorum', ready, 15_000, 50);
      set.startupMs = performance.now() - began;
      return set;
    } catch (error) {
      await set.stop();
      throw error;
    }
  }

  /** Every process this set has started, dead or alive (restarts add entries). */
  get processes(): readonly RedisProcess[] {
    return [...this.spawned];
  }

  get sentinels(): { host: string; port: number }[] {
    return this.sentinelNodes.map(({ port }) => ({ host: '127.0.0.1', port }));
  }

  /** The node started as master; after a failover it is no longer the master. */
  get master(): RedisProcess {
    return this.dataNodes[0]!;
  }

  get replicas(): RedisProcess[] {
    return this.dataNodes.slice(1);
  }

  /** The node started as (first) replica; after a failover it is the master. */
  get replica(): RedisProcess {
    return this.dataNodes[1]!;
  }

  /** A sentinel-mode client that follows failovers; the caller closes it. */
  client(options: RedisOptions = {}): Redis {
    const client = new Redis({
      sentinels: this.sentinels,
      name: this.masterName,
      maxRetriesPerRequest: 1,
      connectTimeout: 1_000,
      ...options,
    });
    client.on('error', () => undefined);
    return client;
  }

  async stopReplica(): Promise<void> {
    await this.replica.kill();
  }

  /** Same port and config file (as sentinel may have rewritten it); waits until it answers. */
  async startReplica(): Promise<void> {
    if (this.replica.alive) return;
    this.dataNodes[1] = await this.launch('redis-server', this.replica.port);
  }

  /** SIGKILLs whichever data node is master now, as a crash the sentinels must detect. */
  async killMaster(): Promise<void> {
    await this.dataNodes.find(({ port }) => port === this.masterPort)?.kill();
    this.lastKillAt = performance.now();
  }

  /** Resolves once every live sentinel names a new master and that node says role:master. */
  async waitForFailover(timeoutMs = 20_000): Promise<SentinelFailover> {
    const since = this.lastKillAt ?? performance.now();
    const live = this.sentinelNodes.filter((sentinel) => sentinel.alive);
    const port = await waitUntil(
      'sentinels to agree on a promoted master',
      async () => {
        const reported = live.map(({ port }) => sentinelMasterPort(port, this.masterName));
        const ports = new Set(await Promise.all(reported));
        const [candidate] = ports;
        if (ports.size !== 1 || !candidate || candidate === this.masterPort) return undefined;
        return (await infoOf(candidate, 'replication'))?.role === 'master' ? candidate : undefined;
      },
      timeoutMs,
      50,
    );
    const elapsedMs = performance.now() - since;
    this.masterPort = port;
    return { master: this.dataNodes.find((node) => node.port === port)!, elapsedMs };
  }

  /**
   * Kills every process this set started and removes its temp dir; fails, once they are gone, if
   * the library left a key without an expiry on the master.
   */
  async stop(): Promise<void> {
    const leftovers = expectEveryLockKeyToExpire([this.masterPort]);
    await leftovers.catch(() => undefined);
    await Promise.all(this.spawned.map((node) => node.kill()));
    await rm(this.dir, { recursive: true, force: true });
    await leftovers;
  }

  private async replicasLinked(): Promise<boolean> {
    const infos = await Promise.all(this.replicas.map(({ port }) => infoOf(port, 'replication')));
    return infos.every((info) => info?.master_link_status === 'up');
  }

  private async sentinelsReady(): Promise<boolean> {
    const replicas = this.replicas.map(({ port }) => port);
    const ready = this.sentinelNodes.map(({ port }) =>
      sentinelReady(port, this.masterName, replicas),
    );
    return (await Promise.all(ready)).every(Boolean);
  }

  /** A data node from a config file, so sentinel's CONFIG REWRITE on failover succeeds. */
  private spawnDataNode(port: number, replicaOf?: number): Promise<RedisProcess> {
    const config = [`port ${port}`, 'bind 127.0.0.1', `dir "${this.dir}"`];
    config.push('save ""', 'appendonly no', 'repl-diskless-sync-delay 0');
    if (replicaOf) config.push(`replicaof 127.0.0.1 ${replicaOf}`);
    return this.spawnWithConfig('redis-server', port, config);
  }

  private async spawnWithConfig(binary: Binary, port: number, lines: string[]) {
    await writeFile(this.configFile(binary, port), lines.join('\n') + '\n');
    return this.launch(binary, port);
  }

  private async launch(binary: Binary, port: number): Promise<RedisProcess> {
    const node = RedisProcess.spawn(binary, port, [this.configFile(binary, port)]);
    this.spawned.push(node);
    await node.ready();
    return node;
  }

  private configFile(binary: Binary, port: number): string {
    return join(this.dir, `${binary}-${port}.conf`);
  }
}

type Binary = 'redis-server' | 'redis-sentinel';
