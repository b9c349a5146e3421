import {
  createServer,
  request,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import {
  HISTOGRAM_BOUNDS_MS,
  LIVE_TICK_MS,
  type LiveSnapshot,
} from '../../src/live/live-snapshot.js';
import type { Endpoint } from '../flash-sale.js';
import type { InstanceFeed } from './instance-feed.js';
import type { LiveControls } from './live-controls.js';

const endpoints: readonly string[] = ['buy', 'buy-unsafe', 'buy-atomic'];

/**
 * The one URL `seckill:live` prints. It answers the page's stream (`/live/events`, the three
 * instances' streams merged) and its controls (`/live/control/…`) itself, and hands every other
 * request, the page's files included, to the first instance: the page comes from the sample
 * app, and the browser talks to one origin.
 */
export class LiveHub {
  private readonly server: Server;
  private readonly streams = new Set<ServerResponse>();
  private readonly ticker: NodeJS.Timeout;

  constructor(
    private readonly pageOrigin: string,
    private readonly feed: InstanceFeed,
    private readonly controls: LiveControls,
  ) {
    this.server = createServer((req, res) => this.route(req, res));
    this.ticker = setInterval(() => this.broadcast(), LIVE_TICK_MS);
  }

  listen(port: number): Promise<string> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        const address = this.server.address();
        resolve(
          `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}/`,
        );
      });
    });
  }

  /** Ends the page streams first: open responses would keep the server from closing. */
  close(): Promise<void> {
    clearInterval(this.ticker);
    for (const stream of this.streams) stream.end();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  snapshot(): LiveSnapshot {
    return {
      at: Date.now(),
      controls: true,
      bounds: HISTOGRAM_BOUNDS_MS,
      ...this.feed.merged(),
      sale: this.controls.sale,
      log: this.controls.log,
    };
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://hub');
    if (req.method === 'GET' && url.pathname === '/live/events') return this.openStream(res);
    if (req.method === 'POST' && url.pathname.startsWith('/live/control/')) {
      const answer = this.control(url.pathname.slice('/live/control/'.length), url.searchParams);
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: answer.message }));
      return;
    }
    this.proxy(req, res);
  }

  /** Starts what a button asked for; its outcome goes to the log the page shows. */
  private control(action: string, params: URLSearchParams): { status: number; message: string } {
    const endpoint = params.get('endpoint') ?? '';
    if (action === 'sale' && endpoints.includes(endpoint))
      return { status: 202, message: this.controls.startSale(endpoint as Endpoint) };
    if (action === 'pause') {
      const name = params.get('instance') ?? '';
      this.controls.pause(name);
      return { status: 202, message: `Pausing ${name} for 2 s…` };
    }
    if (action === 'restart-redis') {
      this.controls
        .restartRedis()
        .catch((error: Error) =>
          this.controls.say(`Restarting Redis failed: ${error.message}`, 'bad'),
        );
      return { status: 202, message: 'Restarting Redis…' };
    }
    return { status: 404, message: `Unknown control ${action}.` };
  }

  private openStream(res: ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    this.streams.add(res);
    res.on('close', () => this.streams.delete(res));
    res.write(`data: ${JSON.stringify(this.snapshot())}\n\n`);
  }

  private broadcast(): void {
    if (this.streams.size === 0) return;
    const event = `data: ${JSON.stringify(this.snapshot())}\n\n`;
    for (const stream of this.streams) stream.write(event);
  }

  private proxy(req: IncomingMessage, res: ServerResponse): void {
    const target = new URL(req.url ?? '/', this.pageOrigin);
    const upstream = request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`The first instance did not answer: ${error.message}`);
    });
    req.pipe(upstream);
  }
}
