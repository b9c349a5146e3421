import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { REDIS, type DataRedis } from '../redis/redis.module.js';
import { productKeys } from './product.keys.js';

export interface ProductView {
  readonly id: number;
  readonly stock: number;
  readonly sold: number;
  readonly orders: number;
}

@Injectable()
export class ProductsService {
  constructor(@Inject(REDIS) private readonly redis: DataRedis) {}

  /** Creates or resets a product: sets its stock and forgets its orders. */
  async reset(id: number, stock: number): Promise<ProductView> {
    const keys = productKeys(id);
    await this.redis
      .multi()
      .del(keys.orders, keys.buyers, keys.stockFence)
      .set(keys.stock, stock)
      .set(keys.initial, stock)
      .exec();
    return { id, stock, sold: 0, orders: 0 };
  }

  async view(id: number): Promise<ProductView> {
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
