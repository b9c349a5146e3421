import type { LockModuleOptions } from 'nestjs-distributed-lock';
import type { SeckillConfig } from './seckill.config.js';

/** The lock module's options for the configured backend: the app code does not change. */
export function lockModuleOptions(config: SeckillConfig): LockModuleOptions {
  const defaults = { wait: config.lockWaitMs, ttl: config.lockTtlMs, fencing: config.fencing };
  switch (config.backend) {
    case 'cluster':
      return { redis: { cluster: config.clusterNodes }, defaults };
    case 'redlock':
      return { redlock: config.redlockUrls, defaults };
    default:
      return { redis: config.redisUrl, defaults };
  }
}
