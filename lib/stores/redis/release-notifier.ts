import type { ReleaseListener } from '../lock-store.interface.js';
import type { RedisClientPort, SubscriberConnection } from './redis-client.port.js';
import { inLibraryScope } from '../library-scope.js';

/**
 * Release notifications over pub/sub, on one dedicated connection the client's adapter makes:
 * plain SUBSCRIBE on a server, sharded SSUBSCRIBE on a cluster (the channel lives in its lock's
 * slot). One subscription per key that has local waiters, shared by all of them.
 */
export class ReleaseNotifier {
  private readonly listeners = new Map<string, Set<ReleaseListener>>();
  private readonly subscribing = new Map<string, Promise<unknown>>();
  private connection?: SubscriberConnection;
  private closed = false;

  constructor(private readonly port: RedisClientPort) {}

  async subscribe(channel: string, listener: ReleaseListener): Promise<() => void> {
    if (this.closed) throw new Error('the release notifier is closed');
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

  /** Whether this process listens on `channel` (so a release's subscriber count includes it). */
  isSubscribed(channel: string): boolean {
    return this.listeners.has(channel);
  }

  async close(): Promise<void> {
    this.closed = true;
    const connection = this.connection;
    this.connection = undefined;
    this.listeners.clear();
    if (connection) await connection.close();
  }

  private remove(channel: string, listener: ReleaseListener): void {
    const set = this.listeners.get(channel);
    if (!set?.delete(listener) || set.size > 0) return;
    this.listeners.delete(channel);
    const connection = this.connection;
    if (!connection) return;
    connection.unsubscribe(channel).catch(() => undefined);
  }

  private connect(): SubscriberConnection {
    if (this.connection) return this.connection;
    // Made in the library's scope: its messages wake every waiter, not the first one's context.
    const connection = inLibraryScope(() =>
      this.port.subscriber({
        message: (channel, turn) => this.fire(channel, turn || undefined),
        // Messages sent while the connection was down (or a slot was moving) are gone: wake
        // every waiter to look again.
        missed: () => this.fireAll(),
      }),
    );
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
