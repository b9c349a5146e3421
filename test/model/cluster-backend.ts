/**
 * A real 3-master Redis Cluster. Each service reaches every node through a delay proxy of its
 * own (ioredis' `natMap` turns the nodes' announced addresses into the proxies'), so one
 * service's replies can be held back on every slot. No restart fault here: a restarted node
 * would rejoin empty and the cluster's own failover is the cluster suite's subject. Grants are
 * revoked and flushes made on every master, as an operator would.
 */
import { Cluster, Redis } from 'ioredis';
import { RedisCluster } from '../harness/redis-cluster.js';
import { DROPPED_AT_ONCE } from '../harness/redis-server.js';
import { TcpDelayProxy } from '../harness/tcp-delay-proxy.js';
import { newAclUser, servicesRule, type AclUser } from './acl-user.js';
import { foreverKeys, type Backend, type StoreLink } from './model-backend.js';

export class ClusterBackend implements Backend {
  readonly name = 'cluster';
  readonly can = ['drop', 'delay', 'remove', 'flushall', 'acl', 'foreign', 'cli'] as const;
  private proxies: TcpDelayProxy[][] = [];

  private constructor(
    private readonly cluster: RedisCluster,
    readonly probe: Cluster,
    /** One direct connection per master, for the scans, cuts, flushes and grants. */
    private readonly nodes: Redis[],
    private readonly user: AclUser,
  ) {}

  static async start(): Promise<ClusterBackend> {
    const cluster = await RedisCluster.start({ masters: 3 });
    const nodes = cluster.nodes.map(({ port }) => {
      const node = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
      node.on('error', () => undefined);
      return node;
    });
    const user = newAclUser();
    const rule = servicesRule(true);
    await Promise.all(
      nodes.map((node) =>
        node.call('ACL', 'SETUSER', user.name, 'reset', 'on', `>${user.password}`, ...rule),
      ),
    );
    return new ClusterBackend(cluster, cluster.client(), nodes, user);
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
    return { type: 'cluster', ports: proxies.map((proxy) => proxy.port), natMap, user: this.user };
  }

  probePorts(): readonly number[] {
    return this.ports;
  }

  client(): Cluster {
    const client = new Cluster(
      this.ports.map((port) => ({ host: '127.0.0.1', port })),
      { redisOptions: { maxRetriesPerRequest: 1, ...DROPPED_AT_ONCE } },
    );
    client.on('error', () => undefined);
    return client;
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

  async removeKey(fullKey: string, how: 'DEL' | 'UNLINK'): Promise<boolean> {
    return (await this.probe.call(how, fullKey)) === 1;
  }

  async flushAll(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.flushall()));
  }

  async setGrant(command: string, granted: boolean): Promise<void> {
    const rule = `${granted ? '+' : '-'}${command}`;
    await Promise.all(this.nodes.map((node) => node.call('ACL', 'SETUSER', this.user.name, rule)));
  }

  cliArgs(): string[] {
    return ['--redis', `redis://127.0.0.1:${this.ports[0]}`, '--cluster'];
  }

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
