import { Controller, Get, Param, Post } from '@nestjs/common';
import { DistributedLock } from 'nestjs-distributed-lock';
import { AppService } from './app.service.js';

@Controller()
export class AppController {
  constructor(private readonly appService: AppService) {}

  @Get()
  getHello(): string {
    return this.appService.getHello();
  }

  /** One order per id at a time, across every instance; a second caller gets 409 at once. */
  @Post('orders/:id')
  @DistributedLock('order:{0}', { wait: 0 })
  async placeOrder(@Param('id') id: string) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    return { order: id };
  }

  @Post('stock/:sku')
  reserve(@Param('sku') sku: string) {
    return this.appService.reserve(sku);
  }
}
