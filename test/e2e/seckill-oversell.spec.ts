import type { AppInstance } from '../../sample-app/demo/app-instances.js';
import { runFlashSale } from '../../sample-app/demo/flash-sale.js';
import { reportFigures } from '../harness/figures.js';
import { scanKeys } from '../harness/scan-keys.js';
import { auditSale, lockKeys, productFenceCounter, strayKeys } from './seckill/sale-audit.js';
import { viewProduct } from './seckill/seckill-http.js';
import { useSaleFleet } from './seckill/use-sale.js';

const PRODUCT_ID = 2001;
const STOCK = 50;
const BUYERS = 1_000;
const CONCURRENCY = 200;

describe('a flash sale across 3 instances sharing one Redis', () => {
  const sale = useSaleFleet();
  let instances: AppInstance[];

  beforeAll(async () => {
    // A long wait: under this load a buyer may queue for the product lock for a while, and a
    // BUSY answer would hide whether the lock kept the count right.
    instances = await sale.fleet.startMany(3, {
      REDIS_URL: sale.server.url,
      LOCK_WAIT_MS: '20000',
    });
  });

  it('sells exactly the stock, once per buyer, and leaves no lock behind', async () => {
    const result = await runFlashSale({
      endpoint: 'buy',
      productId: PRODUCT_ID,
      stock: STOCK,
      users: BUYERS,
      concurrency: CONCURRENCY,
      instanceUrls: instances.map((instance) => instance.url),
      connectData: () => sale.server.client(),
    });

    // Every buyer was answered: 50 sales, and "sold out" for everyone else.
    expect(result.requests).toBe(BUYERS);
    expect(result.answers).toEqual({ '201': STOCK, '409 SOLD_OUT': BUYERS - STOCK });

    const audit = await auditSale(sale.client, PRODUCT_ID);
    expect(audit).toMatchObject({ stock: 0, sold: STOCK, orders: STOCK, oversold: 0 });
    expect(audit.distinctBuyers).toBe(STOCK);
    expect(await viewProduct(instances[1].url, PRODUCT_ID)).toEqual({
      id: PRODUCT_ID,
      stock: 0,
      sold: STOCK,
      orders: STOCK,
    });

    expect(await lockKeys(sale.client)).toEqual([]);
    const keys = await scanKeys(sale.client);
    expect(strayKeys(keys, PRODUCT_ID)).toEqual([]);
    // Each sale took the fenced product lock once; buyers turned away inside it took it too.
    expect(Number(await sale.client.get(productFenceCounter(PRODUCT_ID)))).toBeGreaterThanOrEqual(
      STOCK,
    );

    reportFigures('seckill oversell: 3 instances, 1000 buyers, stock 50', {
      durationMs: Math.round(result.durationMs),
      throughput: Math.round(result.throughput),
      p50: result.p50,
      p99: result.p99,
      productLockTaken: Number(await sale.client.get(productFenceCounter(PRODUCT_ID))),
      keys,
    });
  });
});
