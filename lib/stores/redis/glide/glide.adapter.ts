import { inLibraryScope } from '../../library-scope.js';
import type {
  CommandSender,
  ConnectionEvents,
  RedisArg,
  RedisClientPort,
  SubscriberConnection,
  SubscriberEvents,
} from '../redis-client.port.js';
import { scriptRunner } from '../script-runner.js';
import { asGlideReply, isConnectionFailure } from './glide-replies.js';

/*
 * Valkey GLIDE 2 (`@valkey/valkey-glide`) behind the store's port: a `GlideClient` or a
 * `GlideClusterClient`, through `customCommand`. It never loads GLIDE itself but to page a
 * Cluster's keys (its scan cursor).
 *
 * GLIDE reconnects by itself and tells nobody: a command sent while the server is away waits
 * for its `requestTimeout`. So the first such failure marks the connection down, later calls
 * fail at once, and a PING every `PROBE_MS` finds the server back.
 */

/** The members of a GLIDE client the adapter uses. */
export interface GlideClientLike {
  /** Its options: a route on a Cluster (see `TO_ANY_NODE`), a decoder. */
  customCommand(args: string[], options?: never): Promise<unknown>;
  close(): void;
}

/** Commands the store sends that name no key: a Cluster sends them to any node. */
const KEYLESS: ReadonlySet<string> = new Set(['ping', 'info', 'config', 'cluster', 'wait', 'time']);
const TO_ANY_NODE = { route: 'randomNode' } as const;
/** How often a connection marked down is tried again. */
const PROBE_MS = 100;
/** How long the subscriber waits for a SUBSCRIBE to be confirmed. */
const SUBSCRIBE_MS = 5_000;

/** A GLIDE Cluster client (its function calls take a route). */
export function isGlideCluster(client: GlideClientLike): boolean {
  return typeof (client as { fcallWithRoute?: unknown }).fcallWithRoute === 'function';
}

export function glidePort(client: GlideClientLike): RedisClientPort {
  const cluster = isGlideCluster(client);
  const watchers = new Set<ConnectionEvents>();
  let down: Error | undefined;
  let probing = false;
  const wentDown = (error: Error): void => {
    down = error;
    for (const watcher of [...watchers]) watcher.down(error);
    if (!probing) inLibraryScope(probe);
  };
  const probe = (): void => {
    probing = true;
    setTimeout(() => {
      call('ping', []).then(
        () => {
          probing = false;
          down = undefined;
          for (const watcher of [...watchers]) watcher.ready();
        },
        () => probe(),
      );
    }, PROBE_MS).unref();
  };
  const call = (command: string, args: readonly RedisArg[]): Promise<unknown> => {
    const full = [command, ...args.map(String)];
    return cluster && KEYLESS.has(command)
      ? client.customCommand(full, TO_ANY_NODE as never)
      : client.customCommand(full);
  };
  const reject = (error: unknown): never => {
    if (isConnectionFailure(error) && !down) wentDown(error as Error);
    throw asGlideReply(error);
  };
  const send: CommandSender = (command, args, read) => call(command, args).then(read, reject);
  return {
    kind: 'glide',
    cluster,
    client,
    send,
    script: scriptRunner(send),
    writable: () => down === undefined,
    status: () => (down ? 'closed' : 'ready'),
    watch: (events) => {
      watchers.add(events);
      return () => watchers.delete(events);
    },
    connect: () => undefined,
    ready: () => Promise.resolve(),
    scan: (match, count) => scanKeys(client, cluster, send, match, count),
    subscriber: (events) => subscriberOf(client, cluster, events),
    endpoint: () => endpointOfGlide(client, cluster),
    close: async () => client.close(),
  };
}

/** A cluster scan's cursor, as GLIDE's `scan` takes it. */
interface ClusterCursor {
  isFinished(): boolean;
}

async function* scanKeys(
  client: GlideClientLike,
  cluster: boolean,
  send: CommandSender,
  match: string,
  count: number,
): AsyncGenerator<readonly string[]> {
  if (!cluster) {
    let cursor = '0';
    do {
      const reply = (await send('scan', [cursor, 'MATCH', match, 'COUNT', count])) as unknown[];
      cursor = String(reply[0]);
      yield (reply[1] as unknown[]).map(String);
    } while (cursor !== '0');
    return;
  }
  // Every master in turn, GLIDE's own way: its cursor follows the slots as they move.
  const { ClusterScanCursor } = (await import('@valkey/valkey-glide')) as unknown as {
    ClusterScanCursor: new () => ClusterCursor;
  };
  const scan = (
    client as unknown as {
      scan(cursor: ClusterCursor, options: object): Promise<[ClusterCursor, unknown[]]>;
    }
  ).scan.bind(client);
  let cursor = new ClusterScanCursor();
  while (!cursor.isFinished()) {
    const [next, keys] = await scan(cursor, { match, count });
    cursor = next;
    yield keys.map(String);
  }
}

/** The settings a GLIDE client was made with (kept by the client, though not documented). */
export function configOf(client: GlideClientLike): Record<string, unknown> | undefined {
  const config = (client as unknown as { config?: unknown }).config;
  return config !== null && typeof config === 'object'
    ? (config as Record<string, unknown>)
    : undefined;
}

type Creator = (config: object) => Promise<GlideClientLike & Record<string, unknown>>;

/**
 * The store's subscriber: a client of the same class, made from the client's settings, with a
 * callback for the messages (GLIDE takes it only when a client is made). GLIDE subscribes
 * again after a reconnect by itself, and tells nobody: messages sent meanwhile are missed,
 * and the waiters find the key free at their next poll.
 */
function subscriberOf(
  client: GlideClientLike,
  sharded: boolean,
  events: SubscriberEvents,
): SubscriberConnection {
  const create = (client.constructor as unknown as { createClient?: Creator }).createClient;
  const config = configOf(client);
  if (!config || typeof create !== 'function') return UNHEARD;
  const callback = (message: { channel: unknown; message: unknown }): void =>
    events.message(String(message.channel), String(message.message));
  const made = create.call(client.constructor, {
    ...config,
    // Subscriptions need RESP3, GLIDE's default.
    protocol: undefined,
    lazyConnect: false,
    pubsubSubscriptions: { channelsAndPatterns: {}, callback },
  });
  made.catch(() => undefined);
  const method = (name: string) => async (channel: string) => {
    const subscriber = await made;
    const run = subscriber[name] as (channels: Set<string>, timeout?: number) => Promise<unknown>;
    return run.call(subscriber, new Set([channel]), SUBSCRIBE_MS);
  };
  return {
    subscribe: method(sharded ? 'ssubscribe' : 'subscribe'),
    unsubscribe: method(sharded ? 'sunsubscribe' : 'unsubscribe'),
    close: () => made.then((subscriber) => subscriber.close()).catch(() => undefined),
  };
}

/** A client whose settings cannot be read: no notifications, the waiters poll. */
const UNHEARD: SubscriberConnection = {
  subscribe: () => Promise.resolve(),
  unsubscribe: () => Promise.resolve(),
  close: () => Promise.resolve(),
};

function endpointOfGlide(client: GlideClientLike, cluster: boolean): string {
  const config = configOf(client) ?? {};
  const addresses = (config.addresses ?? []) as { host?: string; port?: number }[];
  const nodes = addresses.map(({ host = 'localhost', port = 6379 }) => `${host}:${port}`);
  if (cluster) return `redis cluster ${nodes.join(',')} (valkey-glide)`.replace('  ', ' ');
  const scheme = config.useTLS ? 'rediss' : 'redis';
  const db = config.databaseId ? `/${config.databaseId}` : '';
  return `${scheme}://${nodes[0] ?? 'localhost:6379'}${db} (valkey-glide)`;
}
