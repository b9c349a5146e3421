import { Logger, type LoggerService } from '@nestjs/common';
import { Cluster, Redis, type ClusterNode, type RedisOptions } from 'ioredis';
import { describe } from '../engine/request/lock-options.validation.js';
import { LockOptionsError } from '../errors/lock.errors.js';
import type {
  LockModuleOptions,
  RedisClusterConfig,
} from './interfaces/lock-module-options.interface.js';
import { DEFAULT_STORE_TIMEOUT } from './lock.constants.js';
import { redisUrlTarget } from '../stores/redis/redis-url.validation.js';
import type { LockStore } from '../stores/lock-store.interface.js';
import { RedisLockStore } from '../stores/redis/redis-lock.store.js';
import { closeConnection } from '../stores/redis/close-connection.js';
import {
  failUnansweredOnClose,
  OWNED_CLIENT_OPTIONS,
  ownedClusterOptions,
  tlsConnectTimeout,
  warnThrough,
} from '../stores/redis/owned-client.js';
import { RedlockLockStore } from '../stores/redlock/redlock-lock.store.js';

/** A store, and how to let go of what the module created for it. */
export interface ProvidedStore {
  readonly store: LockStore;
  /** Closes the store and the clients the module created; leaves the user's open. */
  close(): Promise<void>;
}

/** What a client the module creates takes from the module options besides its target. */
interface Owned {
  readonly storeTimeout: number;
  readonly warn: (message: string) => void;
}

/** Builds the store the module options ask for. Exactly one of redis, redlock, store is set. */
export function provideStore(options: LockModuleOptions): ProvidedStore {
  if (options.store) return { store: options.store, close: async () => undefined };
  const owned: Owned = {
    storeTimeout: options.storeTimeout ?? DEFAULT_STORE_TIMEOUT,
    warn: warnOnce(options.logger),
  };
  if (options.redlock) return provideRedlock(options, owned);
  const { client, created } = connect(options.redis!, 'redis', owned);
  const store = new RedisLockStore(client, { ownsClient: created, replicas: options.replicas });
  return { store, close: () => store.close() };
}

function provideRedlock(options: LockModuleOptions, owned: Owned): ProvidedStore {
  if (options.replicas)
    throw new LockOptionsError('"replicas" applies to "redis", not to "redlock".');
  const connections = options.redlock!.map((node, i) => connect(node, `redlock[${i}]`, owned));
  const store = new RedlockLockStore(
    connections.map(({ client }) => client as Redis),
    options.redlockOptions,
  );
  const created = connections
    .filter((connection) => connection.created)
    .map(({ client }) => client);
  return {
    store,
    close: async () => {
      await store.close();
      // A node that never connected (or is reconnecting) would hold a QUIT for its whole retry.
      await Promise.allSettled(created.map((client) => closeConnection(client)));
    },
  };
}

function connect(
  target: LockModuleOptions['redis'],
  name: string,
  owned: Owned,
): { client: Redis | Cluster; created: boolean } {
  if (isClient(target)) return { client: target, created: false };
  // Lazy: a module whose app fails to bootstrap must not leave a connection keeping it alive.
  const client = isClusterConfig(target)
    ? new Cluster(clusterNodes(target), ownedClusterOptions(target.clusterOptions))
    : clientOf(target as RedisOptions | string, name, owned.storeTimeout);
  if (client instanceof Redis) {
    failUnansweredOnClose(client);
    warnThrough(client, owned.warn);
  }
  // An unreachable Redis must not crash the app with an unhandled 'error' event; failures
  // surface as LockStoreError on the calls that need Redis.
  client.on('error', () => undefined);
  return { client, created: true };
}

function clientOf(target: RedisOptions | string, name: string, storeTimeout: number): Redis {
  if (typeof target !== 'string') {
    return new Redis({
      ...OWNED_CLIENT_OPTIONS,
      ...tlsConnectTimeout(target, storeTimeout),
      ...target,
    });
  }
  const url = redisUrlTarget(target, `LockModule "${name}"`);
  const tls = url.startsWith('rediss:') ? { tls: {} } : {};
  return new Redis(url, { ...OWNED_CLIENT_OPTIONS, ...tlsConnectTimeout(tls, storeTimeout) });
}

function clusterNodes({ cluster }: RedisClusterConfig): ClusterNode[] {
  return cluster.map((node, i) =>
    typeof node === 'string' ? redisUrlTarget(node, `LockModule "redis.cluster[${i}]"`) : node,
  );
}

/**
 * Refuses a target that is no client, options or URL, and a URL that does not parse to a host
 * and port or a socket path (see stores/redis/redis-url.validation.ts), at bootstrap.
 */
export function checkConnectionTarget(target: unknown, name: string): void {
  if (typeof target === 'string') {
    redisUrlTarget(target, `LockModule "${name}"`);
    return;
  }
  if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
    if (isClusterConfig(target)) clusterNodes(target);
    return;
  }
  throw new LockOptionsError(
    `LockModule "${name}" must be an ioredis client, options or a URL, got ${describe(target)}.`,
  );
}

/** Each distinct warning once per module: a store's two connections warn alike. */
function warnOnce(logger: LoggerService | false | undefined): (message: string) => void {
  if (logger === false) return () => undefined;
  const out = logger ?? new Logger('LockModule');
  const said = new Set<string>();
  return (message) => {
    if (said.has(message)) return;
    said.add(message);
    out.warn(message);
  };
}

function isClient(value: unknown): value is Redis | Cluster {
  const candidate = value as Partial<Redis> | undefined;
  return typeof candidate?.evalsha === 'function' && typeof candidate.duplicate === 'function';
}

function isClusterConfig(value: unknown): value is RedisClusterConfig {
  return Array.isArray((value as Partial<RedisClusterConfig> | undefined)?.cluster);
}
