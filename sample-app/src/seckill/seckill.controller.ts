import { Body, Controller, HttpCode, Param, Post, UseInterceptors } from '@nestjs/common';
import { SaleCounter } from '../live/sale-counter.interceptor.js';
import { ProductIdPipe } from '../products/product-id.pipe.js';
import { BuyRequestPipe, type BuyRequest } from './buy-request.pipe.js';
import type { Order } from './seckill.answers.js';
import { SeckillService } from './seckill.service.js';

/** The live page counts every answer (SaleCounter), and changes none. */
@Controller('products/:id')
@UseInterceptors(SaleCounter)
export class SeckillController {
  constructor(private readonly seckill: SeckillService) {}

  @Post('buy')
  @HttpCode(201)
  buy(
    @Param('id', ProductIdPipe) id: number,
    @Body(BuyRequestPipe) body: BuyRequest,
  ): Promise<Order> {
    return this.seckill.buy(id, body.userId);
  }

  @Post('buy-unsafe')
  @HttpCode(201)
  buyUnsafe(
    @Param('id', ProductIdPipe) id: number,
    @Body(BuyRequestPipe) body: BuyRequest,
  ): Promise<Order> {
    return this.seckill.buyUnsafe(id, body.userId);
  }

  @Post('buy-atomic')
  @HttpCode(201)
  buyAtomic(
    @Param('id', ProductIdPipe) id: number,
    @Body(BuyRequestPipe) body: BuyRequest,
  ): Promise<Order> {
    return this.seckill.buyAtomic(id, body.userId);
  }
}
