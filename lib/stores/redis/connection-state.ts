import type { RedisClientPort } from './redis-client.port.js';
import { isAuthenticationRefusal } from '../store-refusals.js';

/* Whether the store's connection is up, and the failure of a call made while it is down. */

const CLOSED = new Error('the connection closed');

/**
 * Whether a client's connection is known to be down: it closed, or its last attempt to connect
 * failed, and it has not been ready since. A call then fails at once instead of waiting in
 * the client's offline queue until it times out; a client not yet connected is not known down.
 *
 * The events come late: ioredis emits its status on the next tick, and a socket whose peer
 * died stops being writable (its end was read) a turn of the loop before ioredis hears of the
 * close, while the status still says 'ready'. A command sent then would wait in the offline
 * queue through every attempt to reconnect, so the client's own state is read as well
 * (the port's `status` and `writable`).
 */
export class ConnectionState {
  /** Why the connection went down, until it is ready again (the events' account only). */
  failure?: Error;
  private readonly waiting = new Set<(error: Error) => void>();

  /** Settles `settling`; set while a caller waits for a connecting client. */
  private settle?: () => void;
  private settling?: Promise<void>;

  private readonly unwatch: () => void;

  constructor(private readonly port: RedisClientPort) {
    this.unwatch = port.watch({
      ready: () => {
        this.failure = undefined;
        this.settled();
      },
      // The close that follows an error keeps the error's reason (a failed TLS handshake, say).
      down: (error) => this.wentDown(error ?? this.failure ?? CLOSED),
    });
  }

  /** Stops following the client: a client the user passed in outlives the store. */
  dispose(): void {
    this.unwatch();
    this.settled();
  }

  /** The reason the connection is down, if it is known to be. */
  get down(): Error | undefined {
    return this.failure ?? (this.closedUnheard() ? CLOSED : undefined);
  }

  /** The client would queue a command rather than write it, for a close it has not told yet. */
  private closedUnheard(): boolean {
    const status = this.port.status();
    return status === 'closed' || (status === 'ready' && !this.port.writable());
  }

  /** Not ready yet, and never failed since it was last ready: still connecting (or lazy). */
  get connecting(): boolean {
    return this.port.status() !== 'ready' && this.down === undefined;
  }

  /** Ready, and not found down since. */
  get ready(): boolean {
    return this.port.status() === 'ready' && this.down === undefined;
  }

  /**
   * Resolves once a connecting client is ready or known down (at once for any other). A lazy
   * client is told to connect: a client without an offline queue would not on a command.
   */
  whenConnected(): Promise<void> {
    if (!this.connecting) return Promise.resolve();
    if (this.port.status() === 'idle') this.port.connect();
    this.settling ??= new Promise((resolve) => (this.settle = resolve));
    return this.settling;
  }

  /** The failure of a call made while the connection is down. */
  refuse(): Promise<never> {
    const error = unreachable(this.down ?? new Error('the connection is down'));
    // Nothing reached Redis: there is nothing to give back.
    return Promise.reject(Object.assign(error, { unsent: true }));
  }

  /** `call`, or a rejection as soon as the connection is found down (a startup check). */
  untilDown<T>(call: () => Promise<T>): Promise<T> {
    const down = this.down;
    if (down) return Promise.reject(unreachable(down));
    return new Promise<T>((resolve, reject) => {
      const onDown = (error: Error): void => reject(unreachable(error));
      this.waiting.add(onDown);
      call()
        .then(resolve, reject)
        .finally(() => this.waiting.delete(onDown));
    });
  }

  private wentDown(error: Error): void {
    this.failure = error;
    for (const reject of [...this.waiting]) reject(error);
    this.settled();
  }

  private settled(): void {
    const { settle } = this;
    this.settle = this.settling = undefined;
    settle?.();
  }
}

/**
 * The failure of a call made while the connection is down. Credentials Redis refused are that
 * refusal, not an outage: a copy of Redis's reply, so that it is read as one (see
 * store-refusals.ts), and never the password, which Redis's reply does not hold.
 */
function unreachable(cause: Error): Error {
  if (!isAuthenticationRefusal(cause)) {
    return new Error(`Redis is unreachable (${cause.message})`, { cause });
  }
  const refused = new Error(cause.message, { cause });
  refused.name = cause.name;
  return refused;
}
