import { Logger, type LoggerService } from '@nestjs/common';
import type { ClusterNode, RedisOptions } from 'ioredis';
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
import { clientKindOf, type RedisClient } from '../stores/redis/redis-clients.js';
import type { RedisClientKind, RedisClientPort } from '../stores/redis/redis-client.port.js';
import { deferredPort } from '../stores/redis/deferred-port.js';
import { buildIoredis } from '../stores/redis/ioredis/ioredis-builder.js';
import { buildNodeRedis } from '../stores/redis/node-redis/node-redis-builder.js';
import { buildGlide } from '../stores/redis/glide/glide-builder.js';
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
  readonly client: RedisClientKind;
}

/** Builds the store the module options ask for. Exactly one of redis, redlock, store is set. */
export function provideStore(options: LockModuleOptions): ProvidedStore {
  if (options.store) return { store: options.store, close: async () => undefined };
  const owned: Owned = {
    storeTimeout: options.storeTimeout ?? DEFAULT_STORE_TIMEOUT,
    warn: warnOnce(options.logger),
    client: options.client ?? 'ioredis',
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
    connections.map(({ client }) => client),
    options.redlockOptions,
  );
  const created = connections.filter((connection) => connection.created);
  return {
    store,
    close: async () => {
      await store.close();
      // A node that never connected (or is reconnecting) would hold a QUIT for its whole retry.
      await Promise.allSettled(created.map(({ client }) => (client as RedisClientPort).close()));
    },
  };
}

type Target = LockModuleOptions['redis'];

function connect(
  target: Target,
  name: string,
  owned: Owned,
): { client: RedisClient | RedisClientPort; created: boolean } {
  if (clientKindOf(target)) return { client: target as RedisClient, created: false };
  const cluster = isClusterConfig(target);
  const build = builderOf(target, name, owned);
  const port = deferredPort(owned.client, cluster, build, nameOf(target, cluster, owned.client));
  return { client: port, created: true };
}

/** Loads the client library the module options name and makes its client. */
function builderOf(target: Target, name: string, owned: Owned): () => Promise<RedisClientPort> {
  const checked =
    typeof target === 'string' ? redisUrlTarget(target, `LockModule "${name}"`) : undefined;
  const url =
    checked !== undefined && owned.client !== 'ioredis' ? serverUrl(checked, name) : checked;
  const nodes = isClusterConfig(target) ? clusterNodes(target) : undefined;
  const library = owned.client;
  if (library === 'node-redis') {
    const nodeTarget = url ?? (nodes ? { cluster: nodes } : (target as Record<string, unknown>));
    return () => buildNodeRedis({ target: nodeTarget }).catch(missing(library, 'redis'));
  }
  if (library === 'glide') {
    const glideTarget = url ?? (nodes ? { cluster: nodes } : (target as Record<string, unknown>));
    return () =>
      buildGlide({ target: glideTarget }).catch(missing(library, '@valkey/valkey-glide'));
  }
  const options = (target as RedisClusterConfig).clusterOptions;
  const ioredisTarget = url ?? (nodes ? { cluster: nodes, options } : (target as RedisOptions));
  const { storeTimeout, warn } = owned;
  return () =>
    buildIoredis({ target: ioredisTarget, storeTimeout, warn }).catch(missing(library, 'ioredis'));
}

/**
 * A checked URL in the form node-redis and GLIDE take: `redis://host:port`. ioredis also takes a
 * bare port or `host:port`; a socket path only ioredis and node-redis (as options) take.
 */
function serverUrl(url: string, name: string): string {
  if (/^rediss?:\/\//.test(url)) return url;
  if (/^\d+$/.test(url)) return `redis://127.0.0.1:${url}`;
  if (!url.startsWith('/')) return `redis://${url}`;
  throw new LockOptionsError(
    `LockModule "${name}": a socket path is taken with the ioredis client; give node-redis { socket: { path } } options instead.`,
  );
}

/** A build that failed to load its client library says which package to install. */
function missing(library: RedisClientKind, pkg: string): (error: unknown) => never {
  return (error) => {
    const code = (error as { code?: string } | undefined)?.code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    throw new LockOptionsError(
      `LockModule: client "${library}" needs the "${pkg}" package, which is not installed. Install it, or pass your own client as "redis".`,
    );
  };
}

/** A node's name before its client is made: host, port and db, never credentials. */
function nameOf(target: Target, cluster: boolean, library: RedisClientKind): string {
  const suffix = library === 'ioredis' ? '' : ` (${library})`;
  if (cluster) return `redis cluster${suffix}`;
  if (typeof target === 'string') {
    const url = redisUrlTarget(target, 'LockModule');
    if (!url.includes('//')) return `redis ${url}${suffix}`;
    const { protocol, hostname, port, pathname } = new URL(url);
    const db = pathname.length > 1 ? pathname : '';
    return `${protocol}//${hostname}:${port || 6379}${db}${suffix}`;
  }
  const { host = 'localhost', port = 6379, db = 0, path, tls } = (target ?? {}) as RedisOptions;
  if (path) return `redis unix:${path}${suffix}`;
  return `${tls ? 'rediss' : 'redis'}://${host}:${port}${db ? `/${db}` : ''}${suffix}`;
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
export function checkConnectionTarget(target: unknown, name: string, client?: unknown): void {
  if (client !== undefined && !CLIENTS.includes(client as RedisClientKind)) {
    throw new LockOptionsError(
      `LockModule "client" must be one of ${CLIENTS.map((kind) => `'${kind}'`).join(', ')}, got ${describe(client)}.`,
    );
  }
  const kind = clientKindOf(target);
  if (kind !== undefined) {
    if (client !== undefined && client !== kind) {
      throw new LockOptionsError(
        `LockModule "${name}" is a ${kind} client, but "client" says '${String(client)}': leave "client" out when you pass a client.`,
      );
    }
    return;
  }
  if (typeof target === 'string') {
    redisUrlTarget(target, `LockModule "${name}"`);
    return;
  }
  if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
    if (isClusterConfig(target)) clusterNodes(target);
    return;
  }
  throw new LockOptionsError(
    `LockModule "${name}" must be a client (ioredis, node-redis or Valkey GLIDE), options or a URL, got ${describe(target)}.`,
  );
}

const CLIENTS: readonly RedisClientKind[] = ['ioredis', 'node-redis', 'glide'];

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

function isClusterConfig(value: unknown): value is RedisClusterConfig {
  return Array.isArray((value as Partial<RedisClusterConfig> | undefined)?.cluster);
}
