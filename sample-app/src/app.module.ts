import { Module, type DynamicModule } from '@nestjs/common';
import { LockModule } from 'nestjs-distributed-lock';
import { ConfigModule } from './config/config.module.js';
import { lockModuleOptions } from './config/lock-options.factory.js';
import { SECKILL_CONFIG, type SeckillConfig } from './config/seckill.config.js';
import { LiveController } from './live/live.controller.js';
import { LiveStats } from './live/live-stats.service.js';
import { SaleCounter } from './live/sale-counter.interceptor.js';
import { ProductsController } from './products/products.controller.js';
import { ProductsService } from './products/products.service.js';
import { RedisModule } from './redis/redis.module.js';
import { OrderBook } from './seckill/order-book.js';
import { SeckillController } from './seckill/seckill.controller.js';
import { SeckillService } from './seckill/seckill.service.js';

@Module({})
export class AppModule {
  static forConfig(config: SeckillConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forConfig(config),
        RedisModule,
        LockModule.forRootAsync({ inject: [SECKILL_CONFIG], useFactory: lockModuleOptions }),
      ],
      controllers: [ProductsController, SeckillController, LiveController],
      providers: [ProductsService, OrderBook, SeckillService, LiveStats, SaleCounter],
    };
  }
}
