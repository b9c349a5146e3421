import autocannon from 'autocannon';
import type { Cluster, Redis } from 'ioredis';
import { productKeys } from '../src/products/product.keys.js';

export type Endpoint = 'buy' | 'buy-unsafe' | 'buy-atomic';

export interface SaleSettings {
  readonly endpoint: Endpoint;
  readonly productId: number;
  readonly stock: number;
  readonly users: number;
  readonly concurrency: number;
  readonly instanceUrls: readonly string[];
  /** Opens a client on the product data, for the audit (closed after it). */
  readonly connectData: () => Redis | Cluster;
  /** Called with the number of answers so far, about 5 times a second. */
  readonly onProgress?: (answered: number) => void;
}

export interface SaleResult {
  readonly endpoint: Endpoint;
  readonly requests: number;
  readonly created: number;
  readonly answers: Record<string, number>;
  readonly sold: number;
  readonly remaining: number;
  readonly orders: number;
  readonly distinctBuyers: number;
  readonly oversold: number;
  readonly duplicates: number;
  readonly busy: number;
  readonly durationMs: number;
  readonly throughput: number;
  readonly p50: number;
  readonly p99: number;
}

/** Resets the product, sells it through every instance at once, then audits Redis. */
export async function runFlashSale(settings: SaleSettings): Promise<SaleResult> {
  const { instanceUrls, productId, stock } = settings;
  const put = await fetch(`${instanceUrls[0]}/products/${productId}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ stock }),
  });
  if (!put.ok)
    throw new Error(`resetting product ${productId} failed: ${put.status} ${await put.text()}`);
  const tally = new Tally();
  const progress = setInterval(() => settings.onProgress?.(tally.total), 200);
  const started = performance.now();
  try {
    await Promise.all(instanceUrls.map((url, i) => load(settings, url, i, tally)));
  } finally {
    clearInterval(progress);
  }
  const durationMs = performance.now() - started;
  settings.onProgress?.(tally.total);
  return { ...(await audit(settings)), ...tally.summary(settings.endpoint, durationMs) };
}

/** One autocannon run against one instance, for that instance's share of the users. */
function load(settings: SaleSettings, url: string, index: number, tally: Tally): Promise<unknown> {
  const count = settings.instanceUrls.length;
  const users = share(settings.users, count, index);
  let next = 0;
  let finish!: (error: unknown) => void;
  const done = new Promise<void>(
    (resolve, reject) => (finish = (error) => (error ? reject(error) : resolve())),
  );
  const instance = autocannon(
    {
      url,
      connections: Math.max(1, share(settings.concurrency, count, index)),
      amount: users,
      timeout: 30,
      requests: [
        {
          method: 'POST',
          path: `/products/${settings.productId}/${settings.endpoint}`,
          headers: { 'content-type': 'application/json' },
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({ userId: `u${index}-${next++}` }),
          }),
          onResponse: (status, body) => tally.answer(status, body),
        },
      ],
    },
    finish,
  );
  instance.on('response', (_client, _status, _bytes, responseTime) => tally.latency(responseTime));
  return done;
}

async function audit(settings: SaleSettings) {
  const redis = settings.connectData();
  try {
    const keys = productKeys(settings.productId);
    const [remainingRaw, orders, buyerIds] = await Promise.all([
      redis.get(keys.stock),
      redis.hlen(keys.orders),
      redis.hvals(keys.orders),
    ]);
    const remaining = Number(remainingRaw);
    const distinctBuyers = new Set(buyerIds).size;
    return {
      sold: settings.stock - remaining,
      remaining,
      orders,
      distinctBuyers,
      oversold: Math.max(0, orders - settings.stock),
      duplicates: orders - distinctBuyers,
    };
  } finally {
    await redis.quit();
  }
}

function share(total: number, parts: number, index: number): number {
  return Math.floor(total / parts) + (index < total % parts ? 1 : 0);
}

/** Counts answers by status and body code, and keeps every latency for exact percentiles. */
class Tally {
  total = 0;
  private readonly answers: Record<string, number> = {};
  private readonly latencies: number[] = [];

  answer(status: number, body: string): void {
    this.total++;
    const code = status === 201 ? '201' : `${status} ${codeOf(body)}`;
    this.answers[code] = (this.answers[code] ?? 0) + 1;
  }

  latency(ms: number): void {
    this.latencies.push(ms);
  }

  summary(endpoint: Endpoint, durationMs: number) {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const at = (q: number): number =>
      sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
    return {
      endpoint,
      requests: this.total,
      created: this.answers['201'] ?? 0,
      answers: this.answers,
      busy: this.answers['409 BUSY'] ?? 0,
      durationMs,
      throughput: this.total / (durationMs / 1000),
      p50: at(0.5),
      p99: at(0.99),
    };
  }
}

function codeOf(body: string): string {
  try {
    // The app's refusals carry `code`; the lock module's errors carry it as `error`.
    const parsed = JSON.parse(body) as { code?: unknown; error?: unknown };
    return String(parsed.code ?? parsed.error ?? 'ERROR');
  } catch {
    return 'ERROR';
  }
}
