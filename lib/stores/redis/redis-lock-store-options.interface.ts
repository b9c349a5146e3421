import type { RedisClientKind } from './redis-client.port.js';

export type { RedisClient, NodeRedisClientLike, GlideClientLike } from './redis-clients.js';

/** The client libraries the module can make a client with: `LockModule`'s `client` option. */
export type RedisClientChoice = RedisClientKind;

/** Ask replicas to acknowledge each acquire before it counts (Redis `WAIT`). */
export interface ReplicaAcknowledgement {
  /** How many replicas must have the lock key before the acquire succeeds. */
  readonly count: number;
  /** How long to wait for them, in ms. @default 100 */
  readonly timeout?: number;
}

export interface RedisLockStoreOptions {
  /** Close `client` when the store closes. Leave it `false` for a client you manage yourself. @default false */
  ownsClient?: boolean;
  /**
   * Roll back any acquire that fewer than `count` replicas acknowledged within `timeout` (Redis
   * `WAIT`, on the connection that set the key). This narrows, but does not close, the window
   * in which a failover loses a lock: WAIT is not consensus. Not available on Redis Cluster.
   * @default undefined
   */
  replicas?: ReplicaAcknowledgement;
}
