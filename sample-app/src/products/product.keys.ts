/**
 * Redis keys of one product. They share the hash tag `{id}`, so on Redis Cluster they live in
 * one slot and a single script can update them together.
 */
export function productKeys(id: number) {
  const base = `product:{${id}}`;
  return {
    stock: `${base}:stock`,
    initial: `${base}:initial`,
    orders: `${base}:orders`,
    buyers: `${base}:buyers`,
    stockFence: `${base}:stock:fence`,
  };
}

export type ProductKeys = ReturnType<typeof productKeys>;

/** A SCAN glob matching one key of every product (braces are literal in Redis globs). */
export const EVERY_PRODUCT = 'product:{*}:initial';

/** The product id in a key EVERY_PRODUCT matched, or undefined for another key. */
export function productIdOf(key: string): number | undefined {
  const id = Number(/^product:\{([1-9]\d*)\}:initial$/.exec(key)?.[1]);
  return Number.isSafeInteger(id) ? id : undefined;
}
