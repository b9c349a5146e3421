import type {
  CommandSender,
  ConnectionStatus,
  RedisArg,
  RedisClientPort,
  SubscriberConnection,
  SubscriberEvents,
} from '../redis-client.port.js';
import { scriptRunner } from '../script-runner.js';
import {
  asErrorReply,
  closeNodeRedis,
  endpointOfNodeRedis,
  type NodeRedisClientLike,
} from './node-redis-connection.js';

/*
 * node-redis 5 and 6 (`redis`, `@redis/client`) behind the store's port: a client, a Sentinel
 * client or a Cluster, on RESP2 or RESP3. It works on the client it is given, through its
 * documented `sendCommand`, and never loads node-redis itself.
 */

/** Which of node-redis's three `sendCommand` forms a client has. */
type Form = 'client' | 'cluster' | 'sentinel';

/** The events that say a connection is up and that it ended: a Cluster has its own names. */
const EVENTS: Readonly<Record<Form, { up: string; gone: string }>> = {
  client: { up: 'ready', gone: 'end' },
  sentinel: { up: 'ready', gone: 'end' },
  cluster: { up: 'connect', gone: 'disconnect' },
};

/** Commands the store sends that name no key: a Cluster sends them to any node. */
const KEYLESS: ReadonlySet<string> = new Set(['ping', 'info', 'config', 'cluster', 'wait', 'time']);

/** The key a Cluster routes a command by: a script's first key, else the first argument. */
function firstKeyOf(command: string, args: readonly RedisArg[]): string | undefined {
  if (command === 'evalsha' || command === 'eval') {
    return Number(args[1]) > 0 ? String(args[2]) : undefined;
  }
  return KEYLESS.has(command) ? undefined : String(args[0]);
}

export function nodeRedisForm(client: NodeRedisClientLike): Form {
  if (Array.isArray(client.masters)) return 'cluster';
  // A Sentinel client's sendCommand takes (isReadonly, args): its first parameter is no array.
  return typeof (client as { getSentinelNode?: unknown }).getSentinelNode === 'function'
    ? 'sentinel'
    : 'client';
}

function senderOf(client: NodeRedisClientLike, form: Form): CommandSender {
  const reject = (error: unknown): never => {
    throw asErrorReply(error);
  };
  const call = (command: string, args: readonly RedisArg[]): Promise<unknown> => {
    // A loop, not a spread and a map: this runs for every command of every lock.
    const full: string[] = new Array<string>(args.length + 1);
    full[0] = command;
    for (let i = 0; i < args.length; i++) {
      const arg = args[i]!;
      full[i + 1] = typeof arg === 'string' ? arg : String(arg);
    }
    if (form === 'client') return client.sendCommand(full);
    if (form === 'sentinel') return client.sendCommand(false, full);
    return client.sendCommand(firstKeyOf(command, args), false, full);
  };
  return (command, args, read) => call(command, args).then(read, reject);
}

export function nodeRedisPort(client: NodeRedisClientLike): RedisClientPort {
  const form = nodeRedisForm(client);
  const send = senderOf(client, form);
  return {
    kind: 'node-redis',
    cluster: form === 'cluster',
    client,
    send,
    script: scriptRunner(send),
    writable: () => client.isReady,
    status: (): ConnectionStatus =>
      client.isReady ? 'ready' : client.isOpen ? 'connecting' : 'idle',
    watch: ({ ready, down }) => {
      const onError = (error: unknown): void => down(asErrorReply(error) as Error);
      const onEnd = (): void => down();
      const { up, gone } = EVENTS[form];
      client.on(up, ready);
      client.on('error', onError);
      client.on(gone, onEnd);
      return () => {
        client.off(up, ready);
        client.off('error', onError);
        client.off(gone, onEnd);
      };
    },
    connect: () => {
      if (!client.isOpen) client.connect().catch(() => undefined);
    },
    ready: () => Promise.resolve(),
    scan: (match, count) => scanNodes(client, form, match, count),
    subscriber: (events) => subscriberOf(client, form, events),
    endpoint: () => endpointOfNodeRedis(client, form === 'cluster'),
    close: () => closeNodeRedis(client),
  };
}

async function* scanNodes(
  client: NodeRedisClientLike,
  form: Form,
  match: string,
  count: number,
): AsyncGenerator<readonly string[]> {
  const nodes =
    form === 'cluster'
      ? await Promise.all(client.masters!.map((master) => client.nodeClient!(master)))
      : [client];
  for (const node of nodes) {
    const send = senderOf(node, node === client ? form : 'client');
    let cursor = '0';
    do {
      const [next, keys] = (await send('scan', [cursor, 'MATCH', match, 'COUNT', count])) as [
        string,
        string[],
      ];
      cursor = String(next);
      yield keys;
    } while (cursor !== '0');
  }
}

/**
 * The store's subscriber: a duplicate of the client, connected here. node-redis subscribes
 * again after a reconnect by itself; messages sent meanwhile are gone, so its 'ready' then
 * wakes every waiter.
 */
function subscriberOf(
  client: NodeRedisClientLike,
  form: Form,
  events: SubscriberEvents,
): SubscriberConnection {
  const connection = client.duplicate();
  const sharded = form === 'cluster';
  const listener = (message: string, channel: string): void => events.message(channel, message);
  let readyOnce = false;
  connection.on(EVENTS[form].up, () => {
    if (readyOnce) events.missed();
    readyOnce = true;
  });
  connection.on('error', () => undefined);
  const connected = connection.connect();
  connected.catch(() => undefined);
  return {
    subscribe: async (channel) => {
      await connected;
      return sharded
        ? connection.sSubscribe!(channel, listener)
        : connection.subscribe!(channel, listener);
    },
    unsubscribe: async (channel) => {
      await connected;
      return sharded ? connection.sUnsubscribe!(channel) : connection.unsubscribe!(channel);
    },
    close: () => closeNodeRedis(connection),
  };
}
