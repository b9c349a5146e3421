import type { AppInstance } from '../../sample-app/demo/app-instances.js';
import { CommandMonitor, lockCommands } from './seckill/command-monitor.js';
import { auditSale, lockKeys } from './seckill/sale-audit.js';
import { putStock, send } from './seckill/seckill-http.js';
import { useSaleFleet } from './seckill/use-sale.js';

const PRODUCT_ID = 5001;
const STOCK = 3;
const BUY = `/products/${PRODUCT_ID}/buy`;
const USER_ID_RULE =
  'Body must be { "userId": "..." } with 1–64 letters, digits or _ . @ - characters.';
const HUGE_USER_ID = 'u'.repeat(10 * 1024);

const BAD_REQUESTS = [
  { name: 'a missing body', method: 'POST', path: BUY, body: undefined, message: USER_ID_RULE },
  {
    name: 'an empty userId',
    method: 'POST',
    path: BUY,
    body: JSON.stringify({ userId: '' }),
    message: USER_ID_RULE,
  },
  {
    name: 'a 10 KB userId',
    method: 'POST',
    path: BUY,
    body: JSON.stringify({ userId: HUGE_USER_ID }),
    message: USER_ID_RULE,
  },
  {
    name: 'a non-numeric product id',
    method: 'POST',
    path: '/products/abc/buy',
    body: JSON.stringify({ userId: 'valid-user' }),
    message: 'Product id must be a positive integer, got "abc".',
  },
  {
    name: 'a negative stock in PUT',
    method: 'PUT',
    path: `/products/${PRODUCT_ID}`,
    body: JSON.stringify({ stock: -1 }),
    message: 'Body must be { "stock": N } with N a whole number ≥ 0.',
  },
];

describe('the sale refusing bad input', () => {
  let monitor: CommandMonitor;
  const sale = useSaleFleet({ beforeStop: () => monitor?.stop() });
  let app: AppInstance;

  beforeAll(async () => {
    monitor = await CommandMonitor.start(sale.client);
    app = await sale.fleet.start({ REDIS_URL: sale.server.url });
    await putStock(app.url, PRODUCT_ID, STOCK);
  });

  it.each(BAD_REQUESTS)(
    'answers $name with 400 and a clear message, taking no lock',
    async ({ method, path, body, message }) => {
      const { result: answer, commands } = await monitor.during(() =>
        send(app.url, method, path, body),
      );

      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ statusCode: 400, error: 'Bad Request', message });
      // Not even a lock taken and released: validation comes before the lock.
      expect(lockCommands(commands)).toEqual([]);
      expect(await lockKeys(sale.client)).toEqual([]);
      // Nothing was sold or reset.
      expect(await auditSale(sale.client, PRODUCT_ID)).toMatchObject({ stock: STOCK, orders: 0 });
    },
  );

  // The control: the monitor does see the locks of a valid buy, so the checks above can fail.
  it('takes and releases the locks for a valid buy', async () => {
    const { result: answer, commands } = await monitor.during(() =>
      send(app.url, 'POST', BUY, JSON.stringify({ userId: 'valid-user' })),
    );

    expect(answer.status).toBe(201);
    const touched = new Set(lockCommands(commands).flat());
    expect(touched).toContain(`lock:seckill:${PRODUCT_ID}:user:valid-user`);
    expect(touched).toContain(`lock:seckill:${PRODUCT_ID}`);
    expect(await lockKeys(sale.client)).toEqual([]);
  });
});
