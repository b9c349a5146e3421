import type { RedisClientPort } from '../redis-client.port.js';
import { glidePort, type GlideClientLike } from './glide.adapter.js';

/** What the module asks of a GLIDE client it makes. */
export interface GlideTarget {
  /** A checked URL, GLIDE client options, or a Cluster's nodes (URLs or `{ host, port }`). */
  readonly target: string | Record<string, unknown> | { cluster: readonly unknown[] };
}

/**
 * How long a command may wait for its reply, in ms. GLIDE reconnects by itself and holds a
 * command sent while the server is away until then: the adapter then marks the connection down
 * and fails later calls at once (see glide.adapter.ts), so this bounds how long an outage takes
 * to be known. GLIDE's own default is 250 ms.
 */
export const GLIDE_REQUEST_TIMEOUT = 500;

type Creator = { createClient(config: object): Promise<GlideClientLike> };

/** GLIDE's settings from a `redis://` or `rediss://` URL. */
export function glideConfigOf(url: string): Record<string, unknown> {
  const parsed = new URL(url);
  const username = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  const db = Number(parsed.pathname.slice(1) || 0);
  return {
    addresses: [{ host: parsed.hostname, port: Number(parsed.port || 6379) }],
    ...(parsed.protocol === 'rediss:' && { useTLS: true }),
    ...(password && { credentials: { ...(username && { username }), password } }),
    ...(db && { databaseId: db }),
  };
}

/**
 * Loads Valkey GLIDE and makes the module's client, lazily connected: a module whose app fails
 * to bootstrap, or whose Redis is down at startup, must still start.
 */
export async function buildGlide({ target }: GlideTarget): Promise<RedisClientPort> {
  const glide = (await import('@valkey/valkey-glide')) as unknown as {
    GlideClient: Creator;
    GlideClusterClient: Creator;
  };
  const common = { requestTimeout: GLIDE_REQUEST_TIMEOUT, lazyConnect: true };
  if (typeof target === 'object' && Array.isArray(target.cluster)) {
    const addresses = target.cluster.flatMap((node) =>
      typeof node === 'string' ? (glideConfigOf(node).addresses as object[]) : [node],
    );
    const first = target.cluster.find((node) => typeof node === 'string');
    const { addresses: _, ...auth } = first ? glideConfigOf(first as string) : {};
    return glidePort(
      await glide.GlideClusterClient.createClient({ ...common, ...auth, addresses }),
    );
  }
  const config = typeof target === 'string' ? glideConfigOf(target) : target;
  return glidePort(await glide.GlideClient.createClient({ ...common, ...config }));
}
