import type { Cluster, Redis } from 'ioredis';
import { productKeys } from '../products/product.keys.js';
import type { ProductCounts } from './live-snapshot.js';

/** A product read that takes longer (Redis down or restarting) shows as "no answer" instead. */
export const PRODUCT_READ_MS = 200;

/**
 * A product's counts for the live page, or null when it does not exist or Redis does not answer
 * within PRODUCT_READ_MS. One MULTI, so that a restock (itself one MULTI) is seen whole or not
 * at all; no lock, so that the page's reads show in no lock figure. Shared by an instance's
 * stream and the `seckill:live` launcher's, which follows the product each page chose.
 */
export async function readProductCounts(
  redis: Redis | Cluster,
  id: number,
): Promise<ProductCounts | null> {
  const keys = productKeys(id);
  const read = redis
    .multi()
    .get(keys.stock)
    .get(keys.initial)
    .hlen(keys.orders)
    .exec()
    .then((replies) => {
      const [stock, initial, orders] = (replies ?? []).map(([, value]) => value);
      if (stock === null || stock === undefined) return null;
      return { id, stock: Number(stock), initial: Number(initial), orders: Number(orders) };
    })
    .catch(() => null);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>(
    (resolve) => (timer = setTimeout(resolve, PRODUCT_READ_MS, null)),
  );
  return Promise.race([read, timeout]).finally(() => clearTimeout(timer));
}
