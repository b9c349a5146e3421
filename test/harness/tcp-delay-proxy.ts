import { connect, createServer, type Server, type Socket } from 'node:net';

export type ProxyDirection = 'both' | 'toServer' | 'toClient';

/**
 * Forwards one direction of a proxied connection, holding each chunk back by the current delay
 * and everything while paused, without reordering (a chunk never overtakes an earlier one).
 */
class DelayedPipe {
  private readonly queue: { chunk: Buffer | null; due: number }[] = [];
  private timer?: NodeJS.Timeout;

  constructor(
    readonly target: Socket,
    private readonly delayOf: () => number,
    private readonly isPaused: () => boolean,
  ) {}

  /** `null` stands for the end of the stream, forwarded once the data before it is. */
  push(chunk: Buffer | null): void {
    const last = this.queue.at(-1)?.due ?? 0;
    this.queue.push({ chunk, due: Math.max(performance.now() + this.delayOf(), last) });
    this.drain();
  }

  drain(): void {
    clearTimeout(this.timer);
    while (!this.isPaused() && this.queue.length > 0) {
      const wait = this.queue[0]!.due - performance.now();
      if (wait > 0) {
        this.timer = setTimeout(() => this.drain(), wait);
        return;
      }
      const { chunk } = this.queue.shift()!;
      if (this.target.destroyed) return;
      if (chunk) this.target.write(chunk);
      else this.target.end();
    }
  }

  stop(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
  }
}

/** A loopback TCP proxy in front of one port that can make the service behind it slow or mute. */
export class TcpDelayProxy {
  private paused = false;
  private toServerDelay = 0;
  private toClientDelay = 0;
  private readonly sockets = new Set<Socket>();
  private readonly pipes = new Set<DelayedPipe>();
  /** A request containing this text gets through, and its connection drops before the reply. */
  private cutText?: string;
  /** Connections cut that way so far. */
  cuts = 0;

  private constructor(
    private readonly server: Server,
    readonly targetPort: number,
  ) {}

  static async start(targetPort: number, delayMs = 0): Promise<TcpDelayProxy> {
    const server = createServer();
    const proxy = new TcpDelayProxy(server, targetPort);
    proxy.setDelay(delayMs);
    server.on('connection', (client) => proxy.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  get port(): number {
    const address = this.server.address();
    return typeof address === 'object' && address ? address.port : 0;
  }

  /** Delay added to each chunk, in one or both directions; a round trip pays both. */
  setDelay(ms: number, direction: ProxyDirection = 'both'): void {
    if (direction !== 'toClient') this.toServerDelay = ms;
    if (direction !== 'toServer') this.toClientDelay = ms;
  }

  /** Holds all data (connections stay open), like a server that stopped answering. */
  pause(): void {
    this.paused = true;
  }

  /** Forwards what was held, then flows again. */
  resume(): void {
    this.paused = false;
    for (const pipe of this.pipes) pipe.drain();
  }

  /**
   * The next request that contains `text` reaches the server, which applies it; then the
   * connection drops before its reply gets back, as when a link breaks mid-call.
   */
  loseReplyTo(text: string): void {
    this.cutText = text;
  }

  /** Destroys every proxied connection (both ends) and stops listening. */
  async close(): Promise<void> {
    for (const pipe of this.pipes) pipe.stop();
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: Socket): void {
    const upstream = connect({ host: '127.0.0.1', port: this.targetPort });
    const isPaused = (): boolean => this.paused;
    const toServer = new DelayedPipe(upstream, () => this.toServerDelay, isPaused);
    const toClient = new DelayedPipe(client, () => this.toClientDelay, isPaused);
    let cutting = false;
    const forward = (source: Socket, pipe: DelayedPipe, chunk: Buffer): void => {
      if (source === client && this.cutText && chunk.includes(this.cutText)) {
        this.cutText = undefined;
        cutting = true;
      } else if (source === upstream && cutting) {
        this.cuts++;
        client.destroy();
        upstream.destroy();
        return;
      }
      pipe.push(chunk);
    };
    for (const [source, pipe] of [
      [client, toServer],
      [upstream, toClient],
    ] as const) {
      this.sockets.add(source);
      this.pipes.add(pipe);
      source.setNoDelay(true);
      source.on('data', (chunk: Buffer) => forward(source, pipe, chunk));
      source.on('end', () => pipe.push(null));
      // One side failing takes the whole connection down, as a broken link would.
      source.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    for (const pipe of [toServer, toClient]) {
      // Data still queued for a closed socket has nowhere to go.
      pipe.target.on('close', () => {
        this.sockets.delete(pipe.target);
        this.pipes.delete(pipe);
        pipe.stop();
      });
    }
  }
}
