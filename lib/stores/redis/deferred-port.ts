import type {
  ConnectionEvents,
  RedisClientKind,
  RedisClientPort,
  SubscriberConnection,
} from './redis-client.port.js';

/*
 * The port of a client the module builds from a URL or options. The client library is loaded
 * only then, and loading is asynchronous (an app without it never loads it), so the store gets
 * this port at once, and it becomes the built client's port once that is made: its members are
 * then the built port's own, so no call goes through here any more.
 */

export function deferredPort(
  kind: RedisClientKind,
  cluster: boolean,
  build: () => Promise<RedisClientPort>,
  /** Where it connects, for logs, until it is made. */
  name: string,
): RedisClientPort {
  const watchers = new Map<ConnectionEvents, () => void>();
  let connectAsked = false;
  let built: RedisClientPort | undefined;
  const building = build().then((port) => {
    built = port;
    Object.assign(deferred, port);
    // Whatever watched this port watches the built one from now on.
    for (const events of watchers.keys()) {
      watchers.set(events, port.watch(events));
      if (port.status() === 'ready') events.ready();
    }
    if (connectAsked) port.connect();
    return port;
  });
  // A build that fails (the client library is not installed) fails each call with its reason.
  building.catch(() => undefined);
  const later =
    <A extends unknown[], R>(use: (port: RedisClientPort, ...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      building.then((port) => use(port, ...args));
  const deferred: RedisClientPort = {
    kind,
    cluster,
    client: undefined,
    send: later((port, command, args, read) => port.send(command, args, read)),
    script: later((port, script, keys, args, read) =>
      port.script(script, keys, args, read),
    ) as RedisClientPort['script'],
    writable: () => false,
    status: () => 'idle',
    watch: (events) => {
      watchers.set(events, () => undefined);
      return () => {
        watchers.get(events)?.();
        watchers.delete(events);
      };
    },
    connect: () => {
      connectAsked = true;
    },
    ready: () => building.then((port) => port.ready()),
    scan: (match, count) => scanLater(building, match, count),
    subscriber: (events) => subscriberLater(building, events),
    endpoint: () => built?.endpoint() ?? name,
    close: () => building.then((port) => port.close()).catch(() => undefined),
  };
  return deferred;
}

async function* scanLater(
  building: Promise<RedisClientPort>,
  match: string,
  count: number,
): AsyncGenerator<readonly string[]> {
  yield* (await building).scan(match, count);
}

function subscriberLater(
  building: Promise<RedisClientPort>,
  events: Parameters<RedisClientPort['subscriber']>[0],
): SubscriberConnection {
  const connection = building.then((port) => port.subscriber(events));
  connection.catch(() => undefined);
  return {
    subscribe: (channel) => connection.then((made) => made.subscribe(channel)),
    unsubscribe: (channel) => connection.then((made) => made.unsubscribe(channel)),
    close: () => connection.then((made) => made.close()).catch(() => undefined),
  };
}
