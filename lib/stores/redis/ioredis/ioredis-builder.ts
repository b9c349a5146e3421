import type { ClusterNode, ClusterOptions, RedisOptions } from 'ioredis';
import type { RedisClientPort } from '../redis-client.port.js';
import { ioredisPort } from './ioredis.adapter.js';
import { adoptIoredis } from './ioredis-internals.js';
import {
  failUnansweredOnClose,
  OWNED_CLIENT_OPTIONS,
  ownedClusterOptions,
  tlsConnectTimeout,
  warnThrough,
} from './owned-client.js';

/** What the module asks of an ioredis client it makes. */
export interface IoredisTarget {
  /** A checked URL (see redis-url.validation.ts), ioredis options, or a Cluster's nodes. */
  readonly target: string | RedisOptions | { cluster: ClusterNode[]; options?: ClusterOptions };
  readonly storeTimeout: number;
  readonly warn: (message: string) => void;
}

/**
 * Loads ioredis and makes the module's client (lazy: a module whose app fails to bootstrap
 * must not leave a connection keeping it alive), with the options of owned-client.ts.
 */
export async function buildIoredis({
  target,
  storeTimeout,
  warn,
}: IoredisTarget): Promise<RedisClientPort> {
  const ioredis = await import('ioredis');
  adoptIoredis(ioredis);
  const { Redis, Cluster } = ioredis;
  let client;
  if (typeof target === 'object' && 'cluster' in target) {
    client = new Cluster(target.cluster, ownedClusterOptions(target.options));
  } else if (typeof target === 'string') {
    const tls = target.startsWith('rediss:') ? { tls: {} } : {};
    client = new Redis(target, {
      ...OWNED_CLIENT_OPTIONS,
      ...tlsConnectTimeout(tls, storeTimeout),
    });
  } else {
    const timeouts = tlsConnectTimeout(target, storeTimeout);
    client = new Redis({ ...OWNED_CLIENT_OPTIONS, ...timeouts, ...target });
  }
  if (client instanceof Redis) {
    failUnansweredOnClose(client);
    warnThrough(client, warn);
  }
  // An unreachable Redis must not crash the app with an unhandled 'error' event; failures
  // surface as LockStoreError on the calls that need Redis.
  client.on('error', () => undefined);
  return ioredisPort(client);
}
