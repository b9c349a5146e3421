import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { Cluster } from 'ioredis';
import { LockService, type LockOptions } from 'nestjs-distributed-lock';
import { SECKILL_CONFIG, type SeckillConfig } from '../config/seckill.config.js';
import { REDIS, type DataRedis } from '../redis/redis.module.js';
import { EVERY_PRODUCT, productIdOf, productKeys } from './product.keys.js';

export interface ProductView {
  readonly id: number;
  readonly stock: number;
  readonly sold: number;
  readonly orders: number;
}

/**
 * The product catalogue. A restock rewrites a product's stock, orders and buyers at once, and a
 * view reads them with three commands: a view taken during a restock could pair the new stock
 * with the old orders. So each product has a read-write lock: views share it, a restock takes it
 * alone. Writers are preferred, so a restock waits for the views in progress, never behind a
 * stream of them.
 */
@Injectable()
export class ProductsService {
  /**
   * Redlock offers the mutex only: there, views of one product take turns. No fences: a
   * restock's MULTI checks none (the stock writes of sales are the fenced ones).
   */
  private readonly reading: LockOptions;
  private readonly writing: LockOptions;

  constructor(
    @Inject(REDIS) private readonly redis: DataRedis,
    private readonly locks: LockService,
    @Inject(SECKILL_CONFIG) config: SeckillConfig,
  ) {
    const readWrite = config.backend !== 'redlock';
    this.reading = readWrite ? { mode: 'read' } : { fencing: false };
    this.writing = readWrite ? { mode: 'write', fencing: false } : { fencing: false };
  }

  /** Creates or resets a product: sets its stock and forgets its orders. */
  reset(id: number, stock: number): Promise<ProductView> {
    return this.locks.withLock(catalogueKey(id), () => this.write(id, stock), this.writing);
  }

  view(id: number): Promise<ProductView> {
    return this.locks.withLock(catalogueKey(id), () => this.read(id), this.reading);
  }

  /** The ids of every product in Redis, in order: SCAN, on every master of a cluster. */
  async ids(): Promise<number[]> {
    const nodes = this.redis instanceof Cluster ? this.redis.nodes('master') : [this.redis];
    const ids = new Set<number>();
    for (const node of nodes) {
      for await (const keys of node.scanStream({ match: EVERY_PRODUCT, count: 1_000 })) {
        for (const key of keys as string[]) {
          const id = productIdOf(key);
          if (id !== undefined) ids.add(id);
        }
      }
    }
    return [...ids].sort((a, b) => a - b);
  }

  private async write(id: number, stock: number): Promise<ProductView> {
    const keys = productKeys(id);
    await this.redis
      .multi()
      .del(keys.orders, keys.buyers, keys.stockFence)
      .set(keys.stock, stock)
      .set(keys.initial, stock)
      .exec();
    return { id, stock, sold: 0, orders: 0 };
  }

  private async read(id: number): Promise<ProductView> {
    const keys = productKeys(id);
    const [stock, initial, orders] = await Promise.all([
      this.redis.get(keys.stock),
      this.redis.get(keys.initial),
      this.redis.hlen(keys.orders),
    ]);
    if (stock === null || initial === null)
      throw new NotFoundException({ code: 'NOT_FOUND', message: `No product ${id}.` });
    return { id, stock: Number(stock), sold: Number(initial) - Number(stock), orders };
  }
}

/** The lock of a product's catalogue entry (not of its sales, which `seckill:{id}` guards). */
function catalogueKey(id: number): string {
  return `catalogue:${id}`;
}
