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
