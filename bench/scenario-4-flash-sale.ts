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
import { runCell, withPairedRatio, type CellResult, type ScenarioResult } from './results.js';
import { countOverlaps } from './sections.js';
import { spread } from './stats.js';

const STOCK = 100;
const BUYS = 2_000;
const CONCURRENCY = 200;

/**
 * Flash sale: 2000 buys of a 100-item stock, 200 at a time, each taking the sale's lock (wait
 * up to 2 s) around a read-modify-write of the stock; the locks of each client library in a
 * cell of their own. Next to the locks of the first cell: an atomic Lua ceiling and a no-lock
 * control that must oversell.
 */
export async function runFlashSale(context: ScenarioContext): Promise<ScenarioResult> {
  const { target, options } = context;
  const data = await connect(target.url);
  const cells: CellResult[] = [];
  try {
    for (const [index, client] of options.clients.entries()) {
      const controls = index === 0 ? [await atomicLuaBuyer(data), noLockBuyer] : [];
      const run = async (contenders: Contender[]): Promise<void> => {
        const buyers = [...contenders.map(lockedBuyer), ...controls];
        const cell = await saleCell(context, client, buyers, data);
        cells.push({ ...withPairedRatio(cell, 'redlock', 'buysPerSec', 'ratioToRedlock'), client });
      };
      await withWarmContenders(context, 'defaults', run, client);
    }
  } finally {
    await quit(data);
  }
  return {
    id: 4,
    title: 'Flash sale',
    cells,
    notes: [
      `Each buy: acquire (wait ≤ ${SALE_WAIT_MS} ms; redlock and its fork: their default retries, ~2 s), GET stock, SET stock − 1, release.`,
      "Each client library's locks run in a cell of their own; the shop's GET and SET go through one ioredis connection in every cell, so that only the lock differs.",
      'buysPerSec counts completed buys (sold or found sold out); p50/p99 cover every buy, including those that gave up.',
      '× redlock: median of the per-repetition ratios of buys/s to node-redlock (defaults, on ioredis); min–max show the noise.',
      'CPU µs/buy: CPU time of the bench process (all threads) and of the Redis server, over the buys.',
    ],
  };
}

function saleCell(
  context: ScenarioContext,
  client: string,
  buyers: readonly Buyer[],
  data: Sale['data'],
): Promise<CellResult> {
  return runCell(
    `stock ${STOCK}, ${BUYS} buys @ ${CONCURRENCY} ${client}`,
    { stock: STOCK, buys: BUYS, concurrency: CONCURRENCY, waitMs: SALE_WAIT_MS },
    buyers,
    context.options.reps[4],
    (buyer) => sell(context, buyer, data),
    context.log,
  );
}

async function sell(context: ScenarioContext, buyer: Buyer, data: Sale['data']) {
  const key = freshKey('sale');
  const sale: Sale = { stockKey: `${key}:stock`, lockKey: `${key}:lock`, data, sections: [] };
  await data.set(sale.stockKey, STOCK);
  const outcomes: Record<BuyOutcome, number> = { sold: 0, 'sold-out': 0, 'not-acquired': 0 };
  const latencies: number[] = [];
  let issued = 0;
  const closeWindow = await openCommandWindow(context.target.admin, { countPings: true });
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
      cpuUsPerBuy: commands.cpu.processUs / BUYS,
      redisCpuUsPerBuy: commands.cpu.redisUs / BUYS,
    },
  };
}
