import { openCommandWindow, total } from './command-counter.js';
import { connect, quit } from './contenders/connect.js';
import type { Contender } from './contenders/index.js';
import { freshKey, withWarmContenders, type ScenarioContext } from './context.js';
import {
  SALE_WAIT_MS,
  atomicLuaBuyer,
  lockedBuyer,
  noLockBuyer,
  type Buyer,
  type BuyOutcome,
  type Sale,
} from './flash-sale-buyers.js';
import { runCell, withPairedRatio, type ScenarioResult } from './results.js';
import { countOverlaps } from './sections.js';
import { spread } from './stats.js';

const STOCK = 100;
const BUYS = 2_000;
const CONCURRENCY = 200;

/**
 * Flash sale: 2000 buys of a 100-item stock, 200 at a time, each taking the sale's lock (wait
 * up to 2 s) around a read-modify-write of the stock. Next to the locks: an atomic Lua
 * ceiling and a no-lock control that must oversell.
 */
export async function runFlashSale(context: ScenarioContext): Promise<ScenarioResult> {
  const { target } = context;
  const data = await connect(target.url);
  try {
    return await withWarmContenders(context, 'defaults', (contenders) =>
      saleCell(context, contenders, data),
    );
  } finally {
    await quit(data);
  }
}

async function saleCell(
  context: ScenarioContext,
  contenders: Contender[],
  data: Sale['data'],
): Promise<ScenarioResult> {
  const { options, log } = context;
  const buyers = [...contenders.map(lockedBuyer), await atomicLuaBuyer(data), noLockBuyer];
  const cell = await runCell(
    `stock ${STOCK}, ${BUYS} buys @ ${CONCURRENCY}`,
    { stock: STOCK, buys: BUYS, concurrency: CONCURRENCY, waitMs: SALE_WAIT_MS },
    buyers,
    options.reps[4],
    (buyer) => sell(context, buyer, data),
    log,
  );
  return {
    id: 4,
    title: 'Flash sale',
    cells: [withPairedRatio(cell, 'redlock', 'buysPerSec', 'ratioToRedlock')],
    notes: [
      `Each buy: acquire (wait ≤ ${SALE_WAIT_MS} ms; redlock: its default retries, ~2 s), GET stock, SET stock − 1, release.`,
      'buysPerSec counts completed buys (sold or found sold out); p50/p99 cover every buy, including those that gave up.',
      '× redlock: median of the per-repetition ratios of buys/s to node-redlock (defaults); min–max show the noise.',
    ],
  };
}

async function sell(context: ScenarioContext, buyer: Buyer, data: Sale['data']) {
  const key = freshKey('sale');
  const sale: Sale = { stockKey: `${key}:stock`, lockKey: `${key}:lock`, data, sections: [] };
  await data.set(sale.stockKey, STOCK);
  const outcomes: Record<BuyOutcome, number> = { sold: 0, 'sold-out': 0, 'not-acquired': 0 };
  const latencies: number[] = [];
  let issued = 0;
  const closeWindow = await openCommandWindow(context.target.admin);
  const started = performance.now();
  const shopper = async (worker: number): Promise<void> => {
    while (issued < BUYS) {
      issued++;
      const begin = performance.now();
      outcomes[await buyer.buy(sale, worker)]++;
      latencies.push(performance.now() - begin);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, worker) => shopper(worker)));
  const elapsedMs = performance.now() - started;
  const commands = await closeWindow();
  const { p50, p99 } = spread(latencies);
  const completed = outcomes.sold + outcomes['sold-out'];
  return {
    figures: {
      buysPerSec: completed / (elapsedMs / 1000),
      sold: outcomes.sold,
      soldOut: outcomes['sold-out'],
      notAcquired: outcomes['not-acquired'],
      oversold: Math.max(0, outcomes.sold - STOCK),
      p50,
      p99,
      elapsedMs,
      overlaps: countOverlaps(sale.sections),
      cmdsPerBuy: total(commands.server) / BUYS,
      topLevelPerBuy: total(commands.client) / BUYS,
    },
  };
}
