import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LogLine, SaleState } from '../../src/live/live-snapshot.js';
import { runFlashSale, type Endpoint } from '../flash-sale.js';
import { describeSale, verdict } from '../sale-report.js';
import type { InstanceFeed } from './instance-feed.js';
import type { LiveStack } from './live-stack.js';

export interface SaleSize {
  readonly stock: number;
  readonly users: number;
  readonly concurrency: number;
}

const PAUSE_MS = 2_000;
/** After SIGCONT, how long the paused instance's answers are watched for refusals. */
const AFTER_PAUSE_MS = 1_500;
const LOG_LINES = 12;

const saleNames: Record<Endpoint, string> = {
  buy: 'with the lock',
  'buy-unsafe': 'through the unlocked endpoint',
  'buy-atomic': 'through the atomic Lua endpoint',
};

/**
 * What the page's buttons do, each told in words in the log the page shows. The launcher owns
 * the processes, so it runs the buyers' load (autocannon, as `npm run seckill` does), pauses
 * instances and restarts Redis.
 */
export class LiveControls {
  readonly log: LogLine[] = [];
  sale: SaleState | null = null;
  private saleCount = 0;

  constructor(
    private readonly stack: LiveStack,
    private readonly feed: InstanceFeed,
    private readonly size: SaleSize,
  ) {}

  /** Starts a sale of `productId` (reset to the sale's stock) unless one is running. */
  startSale(endpoint: Endpoint, productId: number): string {
    if (this.sale?.running) return this.say(`A sale is already running (${this.sale.endpoint}).`);
    const { stock, users, concurrency } = this.size;
    this.sale = { id: ++this.saleCount, endpoint, productId, running: true, startedAt: Date.now() };
    const started = this.say(
      `Sale ${saleNames[endpoint]} of product ${productId} started: ${stock} items, ${users} buyers, ${concurrency} at a time, across ${this.stack.instances.length} instances.`,
    );
    runFlashSale({
      endpoint,
      productId,
      ...this.size,
      instanceUrls: this.stack.instances.map((instance) => instance.url),
      connectData: () => new Redis(this.stack.redisUrl, { maxRetriesPerRequest: 1 }),
    })
      .then(
        (result) => {
          // Coloured by outcome: an oversold sale is red, even where the page expects one.
          const correct = verdict(result, stock).length === 0;
          const seconds = (result.durationMs / 1000).toFixed(1);
          this.say(`${describeSale(result, stock)} (${seconds} s)`, correct ? 'good' : 'bad');
        },
        (error: Error) =>
          this.say(`The sale ${saleNames[endpoint]} failed: ${error.message}`, 'bad'),
      )
      .finally(() => {
        this.sale = { ...this.sale!, running: false };
      });
    return started;
  }

  /**
   * Stops an instance for 2 s, at a moment it holds the product lock if a sale is running, and
   * reports what its buyers were answered once it woke.
   */
  async pause(name: string): Promise<string> {
    const instance = this.stack.instances.find((i) => i.name === name);
    if (!instance) return this.say(`No instance ${name}.`, 'bad');
    if (instance.paused) return this.say(`${name} is already paused.`);
    const holding = this.sale?.running ? await waitForProductLock(instance.url) : false;
    const before = this.feed.answersOf(instance);
    const moment = holding ? 'while it held the product lock' : 'at no particular moment';
    this.say(`${name} (pid ${instance.process.pid}) stopped with SIGSTOP ${moment}, for 2 s.`);
    await this.stack.pause(instance, PAUSE_MS);
    this.say(`${name} resumed with SIGCONT.`);
    await sleep(AFTER_PAUSE_MS);
    const after = this.feed.answersOf(instance);
    const refused = since(before, after, (key) => key.includes('LOCK_FENCE_STALE'));
    const lost = since(before, after, (key) => key.includes('LOCK_LOST'));
    const words = [
      refused.length > 0 &&
        `its lease ran out while it was stopped and another instance sold; on waking, its stale stock write was refused by the fence (${refused.join(', ')}).`,
      lost.length > 0 &&
        `buyers whose locks expired during the pause were answered that their lock was lost (${lost.join(', ')}).`,
    ].filter(Boolean);
    if (words.length === 0)
      return this.say(
        `${name} had no write in flight to refuse${this.sale?.running ? '' : ': start a sale with the lock, then pause'}.`,
      );
    return this.say(`${name}: ${words.join(' And ')} Nothing was sold twice.`, 'good');
  }

  async restartRedis(): Promise<string> {
    const oldPid = this.stack.redisPid();
    this.say(`Stopping Redis (pid ${oldPid})…`);
    const downMs = await this.stack.restartRedis();
    const text = `Redis restarted on the same port (pid ${oldPid} → ${this.stack.redisPid()}), down ${Math.round(downMs)} ms. It keeps no data on disk here, so the product and any lock are gone; the instances reconnect by themselves (their state shows it).`;
    return this.say(text, 'good');
  }

  say(text: string, tone: LogLine['tone'] = 'info'): string {
    this.log.push({ at: Date.now(), text, tone });
    if (this.log.length > LOG_LINES) this.log.shift();
    return text;
  }
}

/** Polls the instance until it holds the product lock (true), for 3 s at most (false). */
async function waitForProductLock(url: string): Promise<boolean> {
  const deadline = Date.now() + 3_000;
  while (Date.now() < deadline) {
    const answer = await fetch(`${url}/live/holding`).then(
      (r) => r.json(),
      () => ({}),
    );
    if ((answer as { productLock?: boolean }).productLock) return true;
  }
  return false;
}

/** "N× <answer>" for each answer whose count grew and that `match` selects. */
function since(
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
  match: (key: string) => boolean,
): string[] {
  return Object.entries(after)
    .filter(([key, n]) => match(key) && n > (before[key] ?? 0))
    .map(([key, n]) => `${n - (before[key] ?? 0)}× ${key}`);
}
