import type { Cluster, Redis } from 'ioredis';

/**
 * Whether a client's connection is known to be down: it closed, or its last attempt to connect
 * failed, and it has not been ready since. A call then fails at once instead of waiting in
 * ioredis's offline queue until it times out; a client not yet connected is not known down.
 */
export class ConnectionState {
  private downError?: Error;
  private readonly waiting = new Set<(error: Error) => void>();

  private readonly onReady = (): void => {
    this.downError = undefined;
  };
  private readonly onError = (error: Error): void => this.wentDown(error);
  private readonly onClose = (): void => this.wentDown(new Error('the connection closed'));

  constructor(private readonly client: Redis | Cluster) {
    client.on('ready', this.onReady);
    client.on('error', this.onError);
    client.on('close', this.onClose);
  }

  /** Stops following the client: a client the user passed in outlives the store. */
  dispose(): void {
    this.client.off('ready', this.onReady);
    this.client.off('error', this.onError);
    this.client.off('close', this.onClose);
  }

  /** The reason the connection is down, if it is known to be. */
  get down(): Error | undefined {
    return this.downError;
  }

  /** The failure of a call made while the connection is down. */
  refuse(): Promise<never> {
    const error = unreachable(this.downError ?? new Error('the connection is down'));
    // Nothing reached Redis: there is nothing to give back.
    return Promise.reject(Object.assign(error, { unsent: true }));
  }

  /** `call`, or a rejection as soon as the connection is found down (a startup check). */
  untilDown<T>(call: () => Promise<T>): Promise<T> {
    if (this.downError) return Promise.reject(unreachable(this.downError));
    return new Promise<T>((resolve, reject) => {
      const onDown = (error: Error): void => reject(unreachable(error));
      this.waiting.add(onDown);
      call()
        .then(resolve, reject)
        .finally(() => this.waiting.delete(onDown));
    });
  }

  private wentDown(error: Error): void {
    this.downError = error;
    for (const reject of [...this.waiting]) reject(error);
  }
}

function unreachable(cause: Error): Error {
  return new Error(`Redis is unreachable (${cause.message})`, { cause });
}
