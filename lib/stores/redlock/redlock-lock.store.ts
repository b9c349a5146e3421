import { LockStoreError } from '../../errors/lock.errors.js';
import type {
  AcquireAttempt,
  AcquireRequest,
  ExtendResult,
  LeaseExtension,
  LockStore,
  ReleaseListener,
  ReleaseOptions,
  ReleaseReport,
  ReleaseResult,
  StoreHealth,
  WaiterLists,
} from '../lock-store.interface.js';
import { RedisLockStore } from '../redis/redis-lock.store.js';
import type { RedisClient } from '../redis/redis-clients.js';
import type { RedisClientPort } from '../redis/redis-client.port.js';
import { askAll, describeNodes, type NodeAnswer } from './node-calls.js';
import { NodeConnections } from './node-connections.js';
import { quorumHealth } from './redlock-health.js';
import { splitVoteRetry } from '../../policy/wait-policy.js';
import {
  nodeName,
  resolveRedlockOptions,
  type RedlockOptions,
  type ResolvedRedlockOptions,
} from './redlock-options.js';

/** How long startup waits for each node to connect. */
const CONNECT_TIMEOUT = 5_000;

export interface RedlockLockStoreOptions extends RedlockOptions {
  /** Close the clients when the store closes. @default false */
  ownsClients?: boolean;
}

/**
 * The Redlock algorithm over N independent Redis masters: a lock is held only when a majority
 * of nodes took it and the time that took left some of the lease. Every call goes to all nodes
 * in parallel, each bounded by a per-node timeout. It cannot issue safe fencing tokens.
 */
export class RedlockLockStore implements LockStore {
  readonly supportsFencing = false;
  private readonly nodes: RedisLockStore[];
  private readonly names: string[];
  private readonly settings: ResolvedRedlockOptions;
  private readonly connections: NodeConnections;
  constructor(
    clients: readonly (RedisClient | RedisClientPort)[],
    options: RedlockLockStoreOptions = {},
  ) {
    this.nodes = clients.map(
      (client) => new RedisLockStore(client, { ownsClient: options.ownsClients }),
    );
    const ports = this.nodes.map((node) => node.port);
    this.settings = resolveRedlockOptions(ports, options);
    this.names = ports.map(nodeName);
    this.connections = new NodeConnections(ports);
  }

  /** The node clients, in the order given: what `LOCK_REDIS_CLIENT` injects. */
  get client(): readonly RedisClient[] {
    return this.clients;
  }

  /** How many nodes must agree. */
  get quorum(): number {
    return this.settings.quorum;
  }

  /** Resolves once every node's client is made (see `RedisLockStore.clientReady`). */
  async clientReady(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.clientReady()));
  }

  /** The clients of the nodes, in the order given. */
  get clients(): RedisClient[] {
    return this.nodes.map((node) => node.client);
  }

  /**
   * Connects to every node before the first lock: a connection opened inside an acquire would
   * spend the per-node timeout on the TCP handshake. Unreachable nodes are not fatal here. A
   * client still connecting is waited for: one without an offline queue refuses a ping until then.
   */
  async init(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.port.ready()));
    await this.connections.allSettled(CONNECT_TIMEOUT);
    await askAll(this.nodes, CONNECT_TIMEOUT, (node) => node.ping());
  }

  drift(ttl: number): number {
    return Math.ceil(ttl * this.settings.driftFactor) + 2;
  }

  async tryAcquire(request: AcquireRequest): Promise<AcquireAttempt> {
    const startedAt = performance.now();
    const { quorum } = this.settings;
    // Before anything is sent, and counted in the lease: nodes about to be ready are votes.
    await this.connections.quorumSettled(quorum, this.timeout(request.ttl));
    // No turns: each node would line processes up on its own, and the orders could split votes.
    const perNode = { ...request, takesTurns: false };
    const connecting = this.connections.connectingNow();
    const calls = this.nodes.map((node) => node.tryAcquire(perNode));
    const answers = await askAll(calls, this.timeout(request.ttl), (call) => call);
    const taken = answers.filter((answer) => answer.ok && answer.value.acquired).length;
    const elapsed = performance.now() - startedAt;
    if (taken >= quorum && elapsed < request.ttl - this.drift(request.ttl)) {
      this.leaveWhereBusy(request, answers);
      return { acquired: true };
    }
    // Give back every node that took it or may have (no answer), even after the timeout.
    calls.forEach((call, i) => {
      // Quietly: waking every waiter for a split vote makes them all split again, in step.
      const giveBack = (): Promise<unknown> =>
        this.nodes[i].release(request.keys, request.token, { quiet: true });
      call.then((result) => result.acquired && giveBack(), giveBack).catch(() => undefined);
    });
    const nodes = describeNodes(
      this.names,
      answers.map((a) => (a.ok && a.value.acquired ? 'acquired' : 'busy')),
      answers,
    );
    // Nodes still connecting may answer the next attempt: retried like a split vote, while the
    // caller's wait allows, as node-redlock retries. Nodes known down make no such promise.
    if (this.connections.missedWhileConnecting(quorum, answers, connecting)) {
      return { acquired: false, pttl: splitVoteRetry(request.ttl), nodes };
    }
    this.requireQuorum(answers, request.keys, 'acquire', nodes);
    const pttls = answers.flatMap((a) =>
      a.ok && !a.value.acquired && a.value.pttl >= 0 ? [a.value.pttl] : [],
    );
    // Too few nodes are busy for anyone else to hold a quorum: a split vote (or a win that came
    // too late). Nobody will release, so retry after a short random delay instead of a lease.
    if (pttls.length < this.settings.quorum) {
      return { acquired: false, pttl: splitVoteRetry(request.ttl), nodes };
    }
    return { acquired: false, pttl: Math.min(...pttls), nodes };
  }

  async release(
    keys: readonly string[],
    token: string,
    { quiet = false }: ReleaseOptions = {},
  ): Promise<ReleaseReport> {
    const answers = await askAll(this.nodes, this.settings.nodeTimeout, (node) =>
      node.release(keys, token, { quiet }),
    );
    const reports = answers.flatMap((answer) => (answer.ok ? [answer.value] : []));
    if (reports.length === 0) this.requireQuorum(answers, keys, 'release');
    const waitersElsewhere = reports.some((report) => report.waitersElsewhere);
    return {
      result: this.releaseVerdict(reports.map((report) => report.result)),
      waitersElsewhere,
    };
  }

  private releaseVerdict(results: readonly ReleaseResult[]): ReleaseResult {
    const count = (result: ReleaseResult): number => results.filter((r) => r === result).length;
    if (count('released') >= this.settings.quorum) return 'released';
    return count('stolen') > 0 ? 'stolen' : count('released') > 0 ? 'released' : 'expired';
  }

  async extend(leases: readonly LeaseExtension[]): Promise<ExtendResult[]> {
    const shortest = Math.min(...leases.map((lease) => lease.ttl));
    const answers = await askAll(this.nodes, this.timeout(shortest), (node) => node.extend(leases));
    this.requireQuorum(
      answers,
      leases.flatMap((lease) => lease.keys),
      'extend',
    );
    return leases.map((_, i) => {
      const results = answers.flatMap((answer) => (answer.ok ? [answer.value[i]] : []));
      if (results.filter((r) => r === 'extended').length >= this.settings.quorum) return 'extended';
      return results.includes('stolen') ? 'stolen' : 'expired';
    });
  }

  /** Subscribes on every node that answers; a release on any of them wakes the waiter. */
  async subscribe(key: string, onRelease: ReleaseListener): Promise<() => void> {
    let cancelled = false;
    const unsubscribes: (() => void)[] = [];
    const calls = this.nodes.map((node) =>
      node
        .subscribe(key, onRelease)
        .then((unsubscribe) => (cancelled ? unsubscribe() : unsubscribes.push(unsubscribe))),
    );
    await askAll(calls, this.settings.nodeTimeout, (call) => call);
    return () => {
      cancelled = true;
      unsubscribes.splice(0).forEach((unsubscribe) => unsubscribe());
    };
  }

  /**
   * A listening queue that won on a quorum is still listed on the nodes where the key was busy
   * (a release not yet run there). Left there, it would cost the next release on those nodes a
   * publish for a queue that no longer waits, and stay for the list's lifetime.
   */
  private leaveWhereBusy(
    { keys, queue }: AcquireRequest,
    answers: NodeAnswer<AcquireAttempt>[],
  ): void {
    if (queue === undefined) return;
    answers.forEach((answer, i) => {
      if (answer.ok && answer.value.acquired) return;
      for (const key of keys) this.nodes[i].waiters.leave(key, queue);
    });
  }

  /** Listeners only: the nodes keep no turns for Redlock (see `tryAcquire`). */
  readonly waiters: WaiterLists = {
    leave: (key, queue) => this.nodes.forEach((node) => node.waiters.leave(key, queue)),
  };

  async ping(): Promise<void> {
    const { quorum, nodeTimeout } = this.settings;
    await this.connections.quorumSettled(quorum, nodeTimeout);
    const answers = await askAll(this.nodes, nodeTimeout, (node) => node.ping());
    this.requireQuorum(answers, [], 'ping');
  }

  /** Every node's health, each bounded by `timeout`; up while a quorum answers. */
  health(timeout: number): Promise<StoreHealth> {
    return quorumHealth(this.nodes, this.names, this.settings.quorum, timeout);
  }

  async close(): Promise<void> {
    this.connections.dispose();
    await Promise.allSettled(this.nodes.map((node) => node.close()));
  }

  private timeout(ttl: number): number {
    return Math.max(5, Math.min(this.settings.nodeTimeout, Math.floor(ttl / 10)));
  }

  /** Too few nodes answered to decide anything: a store failure, never "busy". */
  private requireQuorum(
    answers: readonly NodeAnswer<unknown>[],
    keys: readonly string[],
    what: string,
    nodes = describeNodes(
      this.names,
      answers.map(() => 'acquired'),
      answers,
    ),
  ): void {
    const reachable = answers.filter((answer) => answer.ok).length;
    if (reachable >= this.settings.quorum) return;
    const failed = nodes
      .filter((node) => node.outcome === 'failed')
      .map((node) => `${node.node} (${node.error})`);
    throw new LockStoreError(
      keys.length > 0 ? keys.join(' + ') : undefined,
      `Redlock ${what} reached only ${reachable} of ${this.nodes.length} nodes, below the quorum of ${this.settings.quorum}. ` +
        `Failed: ${failed.join(', ')}.`,
      undefined,
      nodes,
    );
  }
}
