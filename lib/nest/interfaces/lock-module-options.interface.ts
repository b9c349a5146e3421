import type { LoggerService } from '@nestjs/common';
import type { ClusterNode, ClusterOptions, RedisOptions } from 'ioredis';
import type { LockStore } from '../../stores/lock-store.interface.js';
import type {
  RedisClient,
  RedisClientChoice,
  ReplicaAcknowledgement,
} from '../../stores/redis/redis-lock-store-options.interface.js';
import type { RedlockOptions } from '../../stores/redlock/redlock-options.js';
import type { LockOptions } from '../../engine/request/lock-options.interface.js';

/** A Redis Cluster for the module to connect to. */
export interface RedisClusterConfig {
  /** Some of the cluster's nodes (URLs, or `{ host, port }`); the rest are discovered. */
  cluster: readonly ClusterNode[];
  /** ioredis cluster options (the ioredis client only). */
  clusterOptions?: ClusterOptions;
}

/** Options of `LockModule.forRoot()` / `forRootAsync()`. Give one of `redis`, `redlock` or `store`. */
export interface LockModuleOptions {
  /**
   * The Redis to lock on: a client of yours (left open at shutdown), of ioredis (`Redis`,
   * `Cluster`), node-redis (`createClient`, `createSentinel`, `createCluster`) or Valkey GLIDE
   * (`GlideClient`, `GlideClusterClient`), told apart by its members; or, for the module to
   * make a client of the library `client` names: a `redis://` URL, that library's options
   * (ioredis options take `sentinels` and `name` for Sentinel), or `{ cluster: nodes }`.
   * Clients the module creates are closed at shutdown.
   * @default undefined
   */
  redis?: RedisClient | RedisOptions | RedisClusterConfig | string | Record<string, unknown>;
  /**
   * Which client library the module makes its client with, from `redis` (or `redlock`) given
   * as a URL, options or cluster nodes. Leave it out when you pass a client of your own.
   * @default 'ioredis'
   */
  client?: RedisClientChoice;
  /**
   * Independent Redis masters (clients, options or URLs) for the Redlock quorum algorithm. Use
   * an odd number, 3 or 5. Redlock cannot issue fencing tokens.
   * @default undefined
   */
  redlock?: readonly (RedisClient | RedisOptions | string | Record<string, unknown>)[];
  /**
   * Redlock's quorum, clock-drift factor and per-node timeout.
   * @default { quorum: majority, driftFactor: 0.01, nodeTimeout: 100 }
   */
  redlockOptions?: RedlockOptions;
  /**
   * With `redis` (single master or Sentinel): require `count` replicas to acknowledge each
   * acquire within `timeout` ms (Redis `WAIT`), or roll it back with `LockStoreError`. Narrows
   * the window in which a failover loses a lock; it is not consensus.
   * @default undefined
   */
  replicas?: ReplicaAcknowledgement;
  /**
   * Any `LockStore` instead, e.g. `MemoryLockStore` from `nestjs-distributed-lock/testing` in
   * unit tests. Left open at shutdown.
   * @default undefined
   */
  store?: LockStore;
  /**
   * Prepended to every key name in the store, so lock keys are easy to find and cannot clash
   * with application data.
   * @default 'lock:'
   */
  keyPrefix?: string;
  /**
   * Defaults for every acquisition; per-call options override them.
   * @default { ttl: 30000, wait: 10000, autoRenew: true, fencing: false }
   */
  defaults?: Omit<LockOptions, 'signal' | 'limit' | 'mode'>;
  /**
   * Longest one store call may take, in ms, before it fails with `LockStoreError`. Keeps an
   * unreachable Redis from stalling requests for ioredis' whole reconnect budget.
   * @default 5000
   */
  storeTimeout?: number;
  /**
   * HTTP status carried by `LockBusyError`, which Nest answers with when a lock is busy
   * (e.g. 423 Locked or 429 Too Many Requests).
   * @default 409
   */
  busyStatusCode?: number;
  /**
   * Longest a waiter sleeps between attempts when no release notification arrives (a lost
   * message, or a holder that let its lease run out). Waiters are normally woken at once. While
   * more than `pollCap / 5` keys (200 at the default) are waited on in one process, their
   * sleeps lengthen so that together they make at most 200 such attempts a second; a waiter
   * still tries as soon as the holder's lease would end.
   * @default 1000
   */
  pollCap?: number;
  /**
   * How many releases in a row may hand a lock straight to the next waiter in this process,
   * without a round trip: the key stays set in Redis under the same token, and the watchdog
   * renews it for the new holder. Then one release goes through Redis, so waiters in other
   * processes get their turn. Only waiters without `fencing` and with `autoRenew` inherit a
   * lease this way. `0` sends every release through Redis.
   * @default 16
   */
  localHandoffs?: number;
  /**
   * At shutdown (`app.close()`, or a signal with `app.enableShutdownHooks()`), every held lock's
   * `signal` aborts with `LockShutdownError`, and the module waits up to this many ms for the
   * code holding them to finish and release them. A lock still held then is not deleted (that
   * would free it under running code): renewal stops and its key expires with its lease.
   * @default 10000
   */
  shutdownTimeout?: number;
  /**
   * Names this instance of the application in `LockService.inspect` and the admin CLI, beside
   * the host name and pid of the process holding a lock (e.g. a pod or task name). Every process
   * registers its owner details once, under a key with an expiry, so locks cost no extra call.
   * @default undefined
   */
  instanceId?: string;
  /**
   * Where the module logs what an operator should hear: the store going down and coming back
   * (once each, not per request), an eviction policy that can drop locks (at startup), and each
   * lost lock (WARN). `false` silences it. Busy and bad-key answers are never logged.
   * @default new Logger('LockModule')
   */
  logger?: LoggerService | false;
}

/** A class for `LockModule.forRootAsync({ useClass })` or `{ useExisting }`. */
export interface LockOptionsFactory {
  createLockOptions(): LockModuleOptions | Promise<LockModuleOptions>;
}
