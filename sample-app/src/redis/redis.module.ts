import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Cluster, Redis } from 'ioredis';
import { SECKILL_CONFIG, type SeckillConfig } from '../config/seckill.config.js';

/** The app's own Redis connection for product data (the lock module has its own). */
export const REDIS = Symbol('REDIS');

/** The data connection: the cluster on the `cluster` backend, else `REDIS_URL`. */
export type DataRedis = Redis | Cluster;

@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [SECKILL_CONFIG],
      useFactory: (config: SeckillConfig): DataRedis =>
        config.backend === 'cluster'
          ? new Cluster([...config.clusterNodes], { redisOptions: { maxRetriesPerRequest: 2 } })
          : new Redis(config.redisUrl, { maxRetriesPerRequest: 2 }),
    },
  ],
  exports: [REDIS],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: DataRedis) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
