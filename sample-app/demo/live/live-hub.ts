import {
  createServer,
  request,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Redis } from 'ioredis';
import {
  HISTOGRAM_BOUNDS_MS,
  LIVE_PRODUCT_ID,
  LIVE_TICK_MS,
  type LiveSnapshot,
  type ProductCounts,
} from '../../src/live/live-snapshot.js';
import { readProductCounts } from '../../src/live/product-counts.js';
import type { Endpoint } from '../flash-sale.js';
import type { InstanceFeed } from './instance-feed.js';
import type { LiveControls } from './live-controls.js';

const endpoints: readonly string[] = ['buy', 'buy-unsafe', 'buy-atomic'];

/**
 * The one URL `seckill:live` prints. It answers the page's stream (`/live/events?product=<id>`,
 * the three instances' streams merged, with the product that page follows read from Redis) and
 * its controls (`/live/control/…`) itself, and hands every other request, the page's files and
 * the catalogue (`/products`) included, to the first instance: the page comes from the sample
 * app, and the browser talks to one origin.
 */
export class LiveHub {
  private readonly server: Server;
  /** Each open page stream, and the product it follows. */
  private readonly streams = new Map<ServerResponse, number>();
  private readonly ticker: NodeJS.Timeout;
  /** A tick's product reads are still out: the next tick is skipped, not queued. */
  private sending = false;

  constructor(
    private readonly pageOrigin: string,
    private readonly feed: InstanceFeed,
    private readonly controls: LiveControls,
    /** The product data, for the product each page follows. */
    private readonly data: Redis,
  ) {
    this.server = createServer((req, res) => this.route(req, res));
    this.ticker = setInterval(() => void this.broadcast(), LIVE_TICK_MS);
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
    for (const stream of this.streams.keys()) stream.end();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  snapshot(product: ProductCounts | null): LiveSnapshot {
    return {
      at: Date.now(),
      controls: true,
      bounds: HISTOGRAM_BOUNDS_MS,
      product,
      instances: this.feed.merged(),
      sale: this.controls.sale,
      log: this.controls.log,
    };
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://hub');
    if (req.method === 'GET' && url.pathname === '/live/events')
      return void this.openStream(res, productOf(url.searchParams));
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
    if (action === 'sale' && endpoints.includes(endpoint)) {
      const product = productOf(params);
      return { status: 202, message: this.controls.startSale(endpoint as Endpoint, product) };
    }
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

  private async openStream(res: ServerResponse, product: number): Promise<void> {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    this.streams.set(res, product);
    res.on('close', () => this.streams.delete(res));
    const snapshot = this.snapshot(await readProductCounts(this.data, product));
    if (this.streams.has(res)) res.write(`data: ${JSON.stringify(snapshot)}\n\n`);
  }

  /** One snapshot per stream, each with its product, read once per tick whoever follows it. */
  private async broadcast(): Promise<void> {
    if (this.streams.size === 0 || this.sending) return;
    this.sending = true;
    try {
      const followed = [...new Set(this.streams.values())];
      const reads = await Promise.all(followed.map((id) => readProductCounts(this.data, id)));
      const counts = new Map(followed.map((id, i) => [id, reads[i]]));
      for (const [stream, id] of this.streams) {
        stream.write(`data: ${JSON.stringify(this.snapshot(counts.get(id) ?? null))}\n\n`);
      }
    } finally {
      this.sending = false;
    }
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

/** The product a page asked for (`?product=<id>`), else the one it follows by default. */
function productOf(params: URLSearchParams): number {
  const id = Number(params.get('product'));
  return Number.isSafeInteger(id) && id > 0 ? id : LIVE_PRODUCT_ID;
}
