/**
 * A real 3-master Redis Cluster. Each service reaches every node through a delay proxy of its
 * own (ioredis' `natMap` turns the nodes' announced addresses into the proxies'), so one
 * service's replies can be held back on every slot. No restart fault here: a restarted node
 * would rejoin empty and the cluster's own failover is the cluster suite's subject.
 */
import { Redis, type Cluster } from 'ioredis';
import { RedisCluster } from '../harness/redis-cluster.js';
import { TcpDelayProxy } from '../harness/tcp-delay-proxy.js';
import { foreverKeys, type Backend, type StoreLink } from './model-backend.js';

export class ClusterBackend implements Backend {
  readonly name = 'cluster';
  readonly faults = ['drop', 'delay'] as const;
  private proxies: TcpDelayProxy[][] = [];

  private constructor(
    private readonly cluster: RedisCluster,
    readonly probe: Cluster,
    /** One direct connection per master, for the scans, cuts and flushes. */
    private readonly nodes: Redis[],
  ) {}

  static async start(): Promise<ClusterBackend> {
    const cluster = await RedisCluster.start({ masters: 3 });
    const nodes = cluster.nodes.map(({ port }) => {
      const node = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
      node.on('error', () => undefined);
      return node;
    });
    return new ClusterBackend(cluster, cluster.client(), nodes);
  }

  private get ports(): number[] {
    return this.cluster.nodes.map(({ port }) => port);
  }

  async beginRun(services: number): Promise<void> {
    this.proxies = await Promise.all(
      Array.from({ length: services }, () =>
        Promise.all(this.ports.map((port) => TcpDelayProxy.start(port))),
      ),
    );
  }

  link(svc: number): StoreLink {
    const proxies = this.proxies[svc]!;
    const natMap = Object.fromEntries(
      this.ports.map((port, i) => [
        `127.0.0.1:${port}`,
        { host: '127.0.0.1', port: proxies[i]!.port },
      ]),
    );
    return { type: 'cluster', ports: proxies.map((proxy) => proxy.port), natMap };
  }

  probePorts(): readonly number[] {
    return this.ports;
  }

  setDelay(svc: number, ms: number): void {
    for (const proxy of this.proxies[svc] ?? []) proxy.setDelay(ms, 'toClient');
  }

  async drop(): Promise<void> {
    await Promise.all(
      this.nodes.map(async (node) => {
        await node.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes').catch(() => undefined);
        await node.call('CLIENT', 'KILL', 'TYPE', 'pubsub').catch(() => undefined);
      }),
    );
  }

  async restart(): Promise<void> {}

  async keysWithoutExpiry(): Promise<string[]> {
    return (await Promise.all(this.nodes.map(foreverKeys))).flat();
  }

  async endRun(): Promise<void> {
    await Promise.all(this.proxies.flat().map((proxy) => proxy.close()));
    this.proxies = [];
    await Promise.all(this.nodes.map((node) => node.flushall().catch(() => undefined)));
  }

  async stop(): Promise<void> {
    this.probe.disconnect();
    for (const node of this.nodes) node.disconnect();
    await this.cluster.stop();
  }
}
