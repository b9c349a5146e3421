import { Inject, Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { currentLock, DistributedLock } from 'nestjs-distributed-lock';
import { SECKILL_CONFIG, type SeckillConfig } from '../config/seckill.config.js';
import { OrderBook } from './order-book.js';
import { answerBusy, answerLost, type Order } from './seckill.answers.js';

/** The three ways to sell: locked and fenced, unprotected (to show the oversell), and atomic. */
@Injectable()
export class SeckillService {
  constructor(
    private readonly book: OrderBook,
    @Inject(SECKILL_CONFIG) private readonly config: SeckillConfig,
  ) {}

  /**
   * One order per user: a user's concurrent clicks queue on their own lock, so only the first
   * reaches the product. Sold-out and repeat buyers are answered before the product lock is
   * even asked for; the product lock re-checks.
   */
  @DistributedLock('seckill:{0}:user:{1}', {
    fencing: false,
    onBusy: answerBusy,
    onLost: answerLost,
  })
  async buy(productId: number, userId: string): Promise<Order> {
    await this.book.checkSale(productId, userId);
    return this.buyHoldingProduct(productId, userId);
  }

  /**
   * The read-check-write on the stock, under the product's lock. The write is fenced: a holder
   * that paused past its lease (while a newer holder sold) cannot write its stale stock. A
   * `lock.signal` check just before the write would not be enough: the pause can fall between
   * the check and the write. Fencing comes from the module defaults (`fencing: true`, except
   * on Redlock, which cannot issue fences).
   */
  @DistributedLock('seckill:{0}', { onBusy: answerBusy, onLost: answerLost })
  async buyHoldingProduct(productId: number, userId: string): Promise<Order> {
    const stock = await this.book.checkSale(productId, userId);
    if (this.config.thinkMs > 0) await sleep(this.config.thinkMs);
    const fence = this.config.fencing ? currentLock()?.fence : undefined;
    return this.book.recordSale(productId, userId, stock, fence);
  }

  /** The same read-check-write with no lock: concurrent buyers read the same stock. */
  async buyUnsafe(productId: number, userId: string): Promise<Order> {
    const stock = await this.book.checkSale(productId, userId);
    if (this.config.thinkMs > 0) await sleep(this.config.thinkMs);
    return this.book.recordSale(productId, userId, stock);
  }

  /** One Lua script does the check and the decrement: no lock needed. */
  buyAtomic(productId: number, userId: string): Promise<Order> {
    return this.book.buyAtomically(productId, userId);
  }
}
