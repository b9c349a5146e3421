import type { AppInstance } from '../../sample-app/demo/app-instances.js';
import { buy, putStock, send } from './seckill/seckill-http.js';
import { useSaleFleet } from './seckill/use-sale.js';

const PRODUCT_ID = 6001;

describe("the sample app's catalogue under its read-write lock", () => {
  const sale = useSaleFleet();
  let apps: AppInstance[];

  beforeAll(async () => {
    apps = await Promise.all([
      sale.fleet.start({ REDIS_URL: sale.server.url }),
      sale.fleet.start({ REDIS_URL: sale.server.url }),
    ]);
  });

  it('never shows a product half-restocked: views share the lock, restocks take it alone', async () => {
    await putStock(apps[0].url, PRODUCT_ID, 50);
    for (const user of ['a', 'b', 'c'])
      expect((await buy(apps[0].url, PRODUCT_ID, user)).status).toBe(201);
    const path = `/products/${PRODUCT_ID}`;
    // Views from both instances, with restocks among them that reset stock and orders at once.
    const calls = Array.from({ length: 60 }, (_, i) => {
      const url = apps[i % 2].url;
      return i % 15 === 7
        ? send(url, 'PUT', path, JSON.stringify({ stock: 10 + i }))
        : send(url, 'GET', path);
    });
    const answers = await Promise.all(calls);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const views = answers.map((answer) => answer.body as { sold: number; orders: number });
    // Sold counts from the stock, orders from the order list: a torn view pairs new and old.
    expect(views.filter((view) => view.sold !== view.orders)).toEqual([]);
    const keys = await sale.client.keys('lock:catalogue:*');
    expect(keys).toEqual([]);
  });
});
