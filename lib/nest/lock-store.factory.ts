import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { describe } from '../engine/request/lock-options.validation.js';
import { LockOptionsError } from '../errors/lock.errors.js';
import type {
  LockModuleOptions,
  RedisClusterConfig,
} from './interfaces/lock-module-options.interface.js';
import type { LockStore } from '../stores/lock-store.interface.js';
import { RedisLockStore } from '../stores/redis/redis-lock.store.js';
import {
  failUnansweredOnClose,
  OWNED_CLIENT_OPTIONS,
  ownedClusterOptions,
} from '../stores/redis/owned-client.js';
import { RedlockLockStore } from '../stores/redlock/redlock-lock.store.js';

/** A store, and how to let go of what the module created for it. */
export interface ProvidedStore {
  readonly store: LockStore;
  /** Closes the store and the clients the module created; leaves the user's open. */
  close(): Promise<void>;
}

/** Builds the store the module options ask for. Exactly one of redis, redlock, store is set. */
export function provideStore(options: LockModuleOptions): ProvidedStore {
  if (options.store) return { store: options.store, close: async () => undefined };
  if (options.redlock) return provideRedlock(options);
  const { client, created } = connect(options.redis!, 'redis');
  const store = new RedisLockStore(client, { ownsClient: created, replicas: options.replicas });
  return { store, close: () => store.close() };
}

function provideRedlock(options: LockModuleOptions): ProvidedStore {
  if (options.replicas)
    throw new LockOptionsError('"replicas" applies to "redis", not to "redlock".');
  const connections = options.redlock!.map((node, i) => connect(node, `redlock[${i}]`));
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
      await Promise.allSettled(
        created.map((client) => client.quit().catch(() => client.disconnect())),
      );
    },
  };
}

function connect(
  target: LockModuleOptions['redis'],
  name: string,
): { client: Redis | Cluster; created: boolean } {
  if (isClient(target)) return { client: target, created: false };
  // Lazy: a module whose app fails to bootstrap must not leave a connection keeping it alive.
  const client = isClusterConfig(target)
    ? new Cluster([...target.cluster], ownedClusterOptions(target.clusterOptions))
    : typeof target === 'string'
      ? clientOfUrl(target, name)
      : new Redis({ ...OWNED_CLIENT_OPTIONS, ...(target as RedisOptions) });
  if (client instanceof Redis) failUnansweredOnClose(client);
  // An unreachable Redis must not crash the app with an unhandled 'error' event; failures
  // surface as LockStoreError on the calls that need Redis.
  client.on('error', () => undefined);
  return { client, created: true };
}

function clientOfUrl(url: string, name: string): Redis {
  try {
    return new Redis(url, OWNED_CLIENT_OPTIONS);
  } catch (error) {
    // The URL is not quoted back: it may hold a password.
    throw new LockOptionsError(
      `LockModule "${name}" is not a Redis URL (${(error as Error).message}). Give ` +
        '"redis://[user:password@]host:port[/db]", "rediss://…" for TLS, a port or a socket path.',
    );
  }
}

export function checkConnectionTarget(target: unknown, name: string): void {
  if (
    typeof target === 'string' ||
    (target !== null && typeof target === 'object' && !Array.isArray(target))
  )
    return;
  throw new LockOptionsError(
    `LockModule "${name}" must be an ioredis client, options or a URL, got ${describe(target)}.`,
  );
}

function isClient(value: unknown): value is Redis | Cluster {
  const candidate = value as Partial<Redis> | undefined;
  return typeof candidate?.evalsha === 'function' && typeof candidate.duplicate === 'function';
}

function isClusterConfig(value: unknown): value is RedisClusterConfig {
  return Array.isArray((value as Partial<RedisClusterConfig> | undefined)?.cluster);
}
