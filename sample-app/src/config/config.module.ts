import { Module, type DynamicModule } from '@nestjs/common';
import { SECKILL_CONFIG, type SeckillConfig } from './seckill.config.js';

/** Makes the app's settings injectable everywhere as `SECKILL_CONFIG`. */
@Module({})
export class ConfigModule {
  static forConfig(config: SeckillConfig): DynamicModule {
    return {
      module: ConfigModule,
      global: true,
      providers: [{ provide: SECKILL_CONFIG, useValue: config }],
      exports: [SECKILL_CONFIG],
    };
  }
}
