import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { fencedWrite, type RedisWrite } from 'nestjs-distributed-lock';
import { productKeys } from '../products/product.keys.js';
import { REDIS, type DataRedis } from '../redis/redis.module.js';
import { refuse, type Order } from './seckill.answers.js';
import { ATOMIC_BUY } from './seckill.scripts.js';

/** Reads and records sales in Redis. The callers decide what protects the read-check-write. */
@Injectable()
export class OrderBook {
  constructor(@Inject(REDIS) private readonly redis: DataRedis) {}

  /** Reads the stock and checks the buyer; throws the matching refusal. Returns the stock. */
  async checkSale(productId: number, userId: string): Promise<number> {
    const keys = productKeys(productId);
    const [[, stock], [, bought]] = (await this.redis
      .pipeline()
      .get(keys.stock)
      .sismember(keys.buyers, userId)
      .exec()) as [[null, string | null], [null, number]];
    if (stock === null) throw refuse.unknownProduct(productId);
    if (bought === 1) throw refuse.alreadyOrdered(userId);
    if (Number(stock) <= 0) throw refuse.soldOut();
    return Number(stock);
  }

  /**
   * Writes the new stock and the order. With a fence the writes are refused (StaleFenceError)
   * if a newer lock holder has written since; without one they are applied blindly.
   */
  async recordSale(
    productId: number,
    userId: string,
    stockRead: number,
    fence?: number,
  ): Promise<Order> {
    const keys = productKeys(productId);
    const orderId = randomUUID();
    const writes: RedisWrite[] = [
      ['SET', keys.stock, stockRead - 1],
      ['HSET', keys.orders, orderId, userId],
      ['SADD', keys.buyers, userId],
    ];
    if (fence !== undefined) {
      await fencedWrite(this.redis, { fence, fenceKey: keys.stockFence, writes });
    } else {
      const pipeline = this.redis.pipeline();
      for (const [command, ...args] of writes) pipeline.call(command, ...args);
      await pipeline.exec();
    }
    return { orderId, productId, userId };
  }

  /** The purchase as one atomic script. */
  async buyAtomically(productId: number, userId: string): Promise<Order> {
    const keys = productKeys(productId);
    const orderId = randomUUID();
    const outcome = Number(
      await this.redis.eval(ATOMIC_BUY, 3, keys.stock, keys.orders, keys.buyers, orderId, userId),
    );
    if (outcome === -2) throw refuse.unknownProduct(productId);
    if (outcome === -1) throw refuse.alreadyOrdered(userId);
    if (outcome === 0) throw refuse.soldOut();
    return { orderId, productId, userId };
  }
}
