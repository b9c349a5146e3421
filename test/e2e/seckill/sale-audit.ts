import type { Redis } from 'ioredis';
import { productKeys } from '../../../sample-app/src/products/product.keys.js';
import { registrationKeyOf } from '../../../lib/stores/redis/owner-registry.js';
import { scanKeys } from '../../harness/scan-keys.js';

/** What Redis says about a product after a sale, read straight from its keys. */
export interface SaleAudit {
  readonly initial: number;
  readonly stock: number;
  /** Units the stock went down by. */
  readonly sold: number;
  readonly orders: number;
  /** The buyer of every order (HVALS of the orders hash), sorted. */
  readonly buyers: readonly string[];
  readonly distinctBuyers: number;
  /** Orders recorded beyond the units the stock went down by: each is a unit sold twice. */
  readonly oversold: number;
}

export async function auditSale(redis: Redis, productId: number): Promise<SaleAudit> {
  const keys = productKeys(productId);
  const [initial, stock, buyers] = await Promise.all([
    redis.get(keys.initial),
    redis.get(keys.stock),
    redis.hvals(keys.orders),
  ]);
  const sold = Number(initial) - Number(stock);
  return {
    initial: Number(initial),
    stock: Number(stock),
    sold,
    orders: buyers.length,
    buyers: [...buyers].sort(),
    distinctBuyers: new Set(buyers).size,
    oversold: buyers.length - sold,
  };
}

/** The lock keys (default `lock:` prefix) still in Redis: a finished sale must leave none. */
export function lockKeys(redis: Redis): Promise<string[]> {
  return scanKeys(redis, 'lock:*');
}

/** The product lock's key, and its fence counter (kept on purpose: fences must only grow). */
export const productLockKey = (productId: number): string => `lock:seckill:${productId}`;
export const productFenceCounter = (productId: number): string =>
  `{lock:seckill:${productId}}\x1ffence`;

/** Where the running instances register as lock owners (they expire once the instances stop). */
const OWNER_REGISTRATIONS = registrationKeyOf('lock:', '');

/**
 * Keys that are neither the product's own, its lock's fence counter, nor a running instance's
 * owner registration.
 */
export function strayKeys(keys: readonly string[], productId: number): string[] {
  const own = `product:{${productId}}:`;
  return keys.filter(
    (key) =>
      !key.startsWith(own) &&
      key !== productFenceCounter(productId) &&
      !key.startsWith(OWNER_REGISTRATIONS),
  );
}
