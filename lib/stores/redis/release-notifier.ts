import type { Redis } from 'ioredis';
import { closeConnection } from './close-connection.js';

type Listener = () => void;

/**
 * Release notifications over pub/sub, on one dedicated connection. One Redis subscription per
 * key that has local waiters, shared by all of them.
 */
export class ReleaseNotifier {
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly subscribing = new Map<string, Promise<unknown>>();
  private connection?: Redis;
  private readyOnce = false;

  constructor(private readonly createConnection: () => Redis) {}

  async subscribe(channel: string, listener: Listener): Promise<() => void> {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      const request = this.connect().subscribe(channel);
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

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    this.listeners.clear();
    if (connection) await closeConnection(connection);
  }

  private remove(channel: string, listener: Listener): void {
    const set = this.listeners.get(channel);
    if (!set?.delete(listener) || set.size > 0) return;
    this.listeners.delete(channel);
    this.connection?.unsubscribe(channel).catch(() => undefined);
  }

  private connect(): Redis {
    if (this.connection) return this.connection;
    const connection = this.createConnection();
    connection.on('message', (channel: string) => this.fire(channel));
    // Messages sent while the connection was down are gone: wake every waiter to look again.
    connection.on('ready', () => {
      if (this.readyOnce) for (const channel of this.listeners.keys()) this.fire(channel);
      this.readyOnce = true;
    });
    connection.on('error', () => undefined);
    this.connection = connection;
    return connection;
  }

  private fire(channel: string): void {
    const set = this.listeners.get(channel);
    if (set) for (const listener of [...set]) listener();
  }
}
