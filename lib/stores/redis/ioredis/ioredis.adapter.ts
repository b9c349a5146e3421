import type { Cluster, Redis } from 'ioredis';
import type {
  CommandSender,
  ConnectionStatus,
  RedisClientPort,
  SubscriberConnection,
  SubscriberEvents,
} from '../redis-client.port.js';
import { scriptRunner } from '../script-runner.js';
import { closeConnection } from './close-connection.js';
import { endpointOf } from './endpoint.js';
import { internalsOf } from './ioredis-checks.js';
import {
  ioredisSender,
  loadIoredis,
  writableCheck,
  type CorkRule,
  type IoredisClient,
} from './ioredis-internals.js';
import { OWNED_DISCONNECT_TIMEOUT_MS } from './owned-client.js';
import { downReason } from './tls-handshake.js';

/**
 * Commands awaiting replies on the connection before a new one is held back (`cork`) to share
 * a socket write. A write that finds Redis asleep wakes it, and that wake-up can be most of a
 * write's cost; with this many commands ahead of it, Redis is still busy when the held-back
 * bytes leave, so holding them costs it no idle time. With fewer, Redis would run dry while
 * Node holds them, and Node would then wait on Redis. The rule was chosen by measurement (see
 * "Design decisions these figures rest on" in bench/RESULTS.md).
 */
export const CORK_BACKLOG = 3;

/**
 * Most commands held back for one write: a quarter of the backlog, so that Redis gets the next
 * batch before it has worked through the last (at least `CORK_BACKLOG`). Deep backlogs (64
 * workers) thus leave in big writes, and shallow ones in small writes that keep both busy.
 */
export function corkBatch(backlog: number): number {
  return Math.max(CORK_BACKLOG, backlog >> 2);
}

const LIBRARY_CORK_RULE: CorkRule = { backlog: CORK_BACKLOG, batch: corkBatch };

export type { IoredisClient };

/** The store's sender on an ioredis client (with `rule` for holding writes back). */
export function corkingSender(
  client: IoredisClient,
  rule: CorkRule = LIBRARY_CORK_RULE,
): CommandSender {
  return ioredisSender(client, internalsOf(client), rule);
}

/** ioredis statuses of a connection that closed or failed to connect. */
const CLOSED: ReadonlySet<string> = new Set(['close', 'reconnecting', 'end']);

/** ioredis 5 and 6 (`Redis`, Sentinel, `Cluster`) behind the store's port. */
export function ioredisPort(client: IoredisClient): RedisClientPort {
  const cluster = client.isCluster;
  const internals = (): ReturnType<typeof internalsOf> => internalsOf(client);
  const senderOf = (): CommandSender =>
    cluster ? ioredisSender(client, internals(), LIBRARY_CORK_RULE) : corkingSender(client);
  const send = senderOf();
  const port = {
    kind: 'ioredis',
    cluster,
    client,
    send,
    script: scriptRunner(send),
    writable: writableCheck(client, internals().socket),
    status: (): ConnectionStatus => statusOf(client.status),
    watch: ({ ready, down }) => {
      const onError = (error: Error): void => down(downReason(client, error));
      const onClose = (): void => down();
      client.on('ready', ready);
      client.on('error', onError);
      client.on('close', onClose);
      return () => {
        client.off('ready', ready);
        client.off('error', onError);
        client.off('close', onClose);
      };
    },
    connect: () => {
      if (client.status === 'wait') client.connect().catch(() => undefined);
    },
    // Once ioredis's `Command` is loaded, the commands take the tricks that need it.
    ready: () =>
      loadIoredis().then(() => {
        const faster = senderOf();
        Object.assign(port, { send: faster, script: scriptRunner(faster) });
        port.writable = writableCheck(client, internals().socket);
      }),
    scan: (match, count) => scanNodes(client, match, count),
    subscriber: (events) => subscriberOf(client, events),
    endpoint: () => endpointOf(client),
    close: () => closeConnection(client),
  } satisfies RedisClientPort as RedisClientPort & { writable: () => boolean };
  if (internals().readInParse === false) port.ready().catch(() => undefined);
  return port;
}

function statusOf(status: string): ConnectionStatus {
  if (status === 'ready') return 'ready';
  if (status === 'wait') return 'idle';
  return CLOSED.has(status) ? 'closed' : 'connecting';
}

async function* scanNodes(
  client: IoredisClient,
  match: string,
  count: number,
): AsyncGenerator<readonly string[]> {
  const nodes = client.isCluster ? (client as Cluster).nodes('master') : [client as Redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', count);
      cursor = next;
      yield keys;
    } while (cursor !== '0');
  }
}

/** The store's subscriber: a connection duplicated from the client, whoever made the client. */
function subscriberOf(client: IoredisClient, events: SubscriberEvents): SubscriberConnection {
  // The subscriber is ours, and is closed as we close our own.
  const disconnectTimeout = OWNED_DISCONNECT_TIMEOUT_MS;
  const sharded = client.isCluster;
  let connection: Redis | Cluster;
  if (sharded) {
    // It queues commands until it is connected, whatever the user's client does.
    const { redisOptions } = (client as Cluster).options;
    connection = (client as Cluster).duplicate([], {
      shardedSubscribers: true,
      enableOfflineQueue: true,
      redisOptions: { ...redisOptions, disconnectTimeout },
    });
  } else {
    // SUBSCRIBE is safe to send twice: let a reconnect resend it. No ready check: SUBSCRIBE runs
    // on a server that is still loading, and ioredis 5 sends a SUBSCRIBE made as the socket
    // connects ahead of the check's INFO, which the server then refuses in subscriber mode. The
    // channels are subscribed again after a reconnect here, not by ioredis, whose own
    // resubscription leaves a refusal (an ACL that lost its SUBSCRIBE) unhandled: that ends
    // the process.
    connection = (client as Redis).duplicate({
      enableOfflineQueue: true,
      autoResendUnfulfilledCommands: true,
      autoResubscribe: false,
      enableReadyCheck: false,
      disconnectTimeout,
    });
  }
  const channels = new Set<string>();
  connection.on(sharded ? 'smessage' : 'message', events.message);
  // Messages sent while the connection was down (or a slot was moving) are gone.
  let readyOnce = false;
  connection.on('ready', () => {
    if (readyOnce) {
      // Refused, the waiters are still woken, and look again at their poll cap.
      if (!sharded && channels.size > 0) {
        (connection as Redis).subscribe(...channels).catch(() => undefined);
      }
      events.missed();
    }
    readyOnce = true;
  });
  if (sharded) connection.on('+node', events.missed);
  connection.on('error', () => undefined);
  return {
    subscribe: (channel) => {
      channels.add(channel);
      return sharded ? connection.ssubscribe(channel) : connection.subscribe(channel);
    },
    unsubscribe: (channel) => {
      channels.delete(channel);
      return sharded ? connection.sunsubscribe(channel) : connection.unsubscribe(channel);
    },
    close: () => closeConnection(connection),
  };
}
