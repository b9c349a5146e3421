import { Cluster, type Redis } from 'ioredis';
import type { ReleaseListener } from '../lock-store.interface.js';
import { closeConnection } from './close-connection.js';
import { OWNED_DISCONNECT_TIMEOUT_MS } from './owned-client.js';
import { inLibraryScope } from '../library-scope.js';

/*
 * Release notifications: the one subscriber connection of a Redis store, and who listens on which
 * channel.
 */

type Subscriber = Redis | Cluster;

/**
 * Release notifications over pub/sub, on one dedicated connection: plain SUBSCRIBE on a
 * server, sharded SSUBSCRIBE on a cluster (the channel lives in its lock's slot). One
 * subscription per key that has local waiters, shared by all of them.
 */
export class ReleaseNotifier {
  private readonly listeners = new Map<string, Set<ReleaseListener>>();
  private readonly subscribing = new Map<string, Promise<unknown>>();
  private connection?: Subscriber;
  private readyOnce = false;
  private closed = false;

  constructor(
    private readonly createConnection: () => Subscriber,
    private readonly sharded: boolean,
  ) {}

  async subscribe(channel: string, listener: ReleaseListener): Promise<() => void> {
    if (this.closed) throw new Error('the release notifier is closed');
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      const connection = this.connect();
      const request = this.sharded ? connection.ssubscribe(channel) : connection.subscribe(channel);
      this.subscribing.set(channel, request);
      request.finally(() => this.subscribing.delete(channel)).catch(() => undefined);
    }
    set.add(listener);
    try {
      await this.subscribing.get(channel);
    } catch (error) {
      this.remove(channel, listener);
      throw error;
    }
    return () => this.remove(channel, listener);
  }

  /** Whether this process listens on `channel` (so a release's subscriber count includes it). */
  isSubscribed(channel: string): boolean {
    return this.listeners.has(channel);
  }

  async close(): Promise<void> {
    this.closed = true;
    const connection = this.connection;
    this.connection = undefined;
    this.listeners.clear();
    if (connection) await closeConnection(connection);
  }

  private remove(channel: string, listener: ReleaseListener): void {
    const set = this.listeners.get(channel);
    if (!set?.delete(listener) || set.size > 0) return;
    this.listeners.delete(channel);
    const connection = this.connection;
    if (!connection) return;
    const request = this.sharded
      ? connection.sunsubscribe(channel)
      : connection.unsubscribe(channel);
    request.catch(() => undefined);
  }

  private connect(): Subscriber {
    if (this.connection) return this.connection;
    // Made in the library's scope: its messages wake every waiter, not the first one's context.
    const connection = inLibraryScope(() => this.createConnection());
    connection.on(this.sharded ? 'smessage' : 'message', (channel: string, turn: string) =>
      this.fire(channel, turn || undefined),
    );
    // Messages sent while the connection was down (or a slot was moving) are gone: wake every
    // waiter to look again.
    connection.on('ready', () => {
      if (this.readyOnce) this.fireAll();
      this.readyOnce = true;
    });
    if (this.sharded) connection.on('+node', () => this.fireAll());
    connection.on('error', () => undefined);
    this.connection = connection;
    return connection;
  }

  private fireAll(): void {
    for (const channel of this.listeners.keys()) this.fire(channel);
  }

  private fire(channel: string, turn?: string): void {
    const set = this.listeners.get(channel);
    if (set) for (const listener of [...set]) listener(turn);
  }
}

/** The notifier for a store on `client`: its own subscriber connection, duplicated from it. */
export function notifierFor(client: Redis | Cluster): ReleaseNotifier {
  // The subscriber is ours, whoever made `client`, and is closed as we close our own.
  const disconnectTimeout = OWNED_DISCONNECT_TIMEOUT_MS;
  if (client instanceof Cluster) {
    // The subscriber queues commands until it is connected, whatever the user's client does.
    const subscriber = () =>
      client.duplicate([], {
        shardedSubscribers: true,
        enableOfflineQueue: true,
        redisOptions: { ...client.options.redisOptions, disconnectTimeout },
      });
    return new ReleaseNotifier(subscriber, true);
  }
  // SUBSCRIBE is safe to send twice: let a reconnect resend it. No ready check: SUBSCRIBE runs on
  // a server that is still loading, and ioredis 5 sends a SUBSCRIBE made as the socket connects
  // ahead of the check's INFO, which the server then refuses in subscriber mode, failing both.
  const subscriber = () =>
    client.duplicate({
      enableOfflineQueue: true,
      autoResendUnfulfilledCommands: true,
      enableReadyCheck: false,
      disconnectTimeout,
    });
  return new ReleaseNotifier(subscriber, false);
}
