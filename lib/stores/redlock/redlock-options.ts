import type { RedisClientPort } from '../redis/redis-client.port.js';
import { LockOptionsError } from '../../errors/lock.errors.js';

/** Tuning of the Redlock quorum store. */
export interface RedlockOptions {
  /**
   * Nodes that must agree for a lock to be held. Must be a majority; required when the node
   * count is even (an even split cannot elect a majority by default).
   * @default Math.floor(nodes / 2) + 1
   */
  quorum?: number;
  /**
   * Share of the ttl allowed for clock drift between this process and the nodes. A lock is held
   * only while `ttl − elapsed − (ttl × driftFactor + 2 ms)` is positive.
   * @default 0.01
   */
  driftFactor?: number;
  /**
   * Longest wait for one node's answer, in ms; capped at a tenth of the lock's ttl so a slow
   * node cannot eat the lease.
   * @default 100
   */
  nodeTimeout?: number;
}

export interface ResolvedRedlockOptions {
  readonly quorum: number;
  readonly driftFactor: number;
  readonly nodeTimeout: number;
}

/** Checks the node list and options at bootstrap. */
export function resolveRedlockOptions(
  ports: readonly RedisClientPort[],
  options: RedlockOptions,
): ResolvedRedlockOptions {
  const count = ports.length;
  if (count === 0)
    throw new LockOptionsError('Redlock needs at least one Redis node; got an empty list.');
  const names = ports.map(nodeName);
  const duplicate = names.find(
    (name, i) => names.indexOf(name) !== i || ports.indexOf(ports[i]) !== i,
  );
  if (duplicate) {
    throw new LockOptionsError(
      `Redlock node ${duplicate} is listed twice; each node must be an independent Redis master.`,
    );
  }
  const { quorum, driftFactor = 0.01, nodeTimeout = 100 } = options;
  if (quorum === undefined && count % 2 === 0) {
    throw new LockOptionsError(
      `Redlock over an even number of nodes (${count}) needs an explicit "quorum" above ${count / 2}; better, use an odd number of nodes.`,
    );
  }
  const resolvedQuorum = quorum ?? Math.floor(count / 2) + 1;
  if (!Number.isInteger(resolvedQuorum) || resolvedQuorum <= count / 2 || resolvedQuorum > count) {
    throw new LockOptionsError(
      `Redlock "quorum" must be a whole majority of the ${count} nodes (${Math.floor(count / 2) + 1}–${count}), got ${quorum}.`,
    );
  }
  if (!(driftFactor >= 0 && driftFactor < 0.5)) {
    throw new LockOptionsError(
      `Redlock "driftFactor" must be from 0 to 0.5 (a share of the ttl), got ${driftFactor}.`,
    );
  }
  if (!(nodeTimeout > 0 && Number.isFinite(nodeTimeout))) {
    throw new LockOptionsError(
      `Redlock "nodeTimeout" must be a positive number of ms, got ${nodeTimeout}.`,
    );
  }
  return { quorum: resolvedQuorum, driftFactor, nodeTimeout };
}

/** `host:port/db` of a node's client (its endpoint, for a client other than ioredis). */
export function nodeName(port: RedisClientPort): string {
  const client = port.client as { options?: Record<string, unknown> } | undefined;
  if (port.kind !== 'ioredis' || !client?.options) {
    return port.endpoint().replace(/^rediss?:\/\//, '');
  }
  const { host = 'localhost', port: at = 6379, db = 0, path } = client.options;
  return (path as string | undefined) ?? `${host}:${at}${db ? `/${db}` : ''}`;
}
