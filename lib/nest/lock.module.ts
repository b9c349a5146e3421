import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { LockExceptionFilter } from './filters/lock-exception.filter.js';
import { ConfigurableLockModule } from './lock.module-definition.js';
import { LockService } from './lock.service.js';
import { LOCK_REDIS_CLIENT, LOCK_STORE, redisClientOf, storeOf } from './lock-store.tokens.js';

/**
 * Registers `LockService`, and a filter that answers lock errors over HTTP, RPC and WebSocket
 * without logging expected outcomes (see `LockExceptionFilter`).
 * `LockModule.forRoot({ redis: 'redis://localhost:6379' })`, or `forRootAsync({ imports, inject,
 * useFactory })`; add `isGlobal: true` to register it once. Also provides the store
 * (`LOCK_STORE`) and its ioredis client (`LOCK_REDIS_CLIENT`) for injection.
 */
@Module({
  providers: [
    LockService,
    { provide: APP_FILTER, useClass: LockExceptionFilter },
    { provide: LOCK_STORE, inject: [LockService], useFactory: storeOf },
    { provide: LOCK_REDIS_CLIENT, inject: [LockService], useFactory: redisClientOf },
  ],
  exports: [LockService, LOCK_STORE, LOCK_REDIS_CLIENT],
})
export class LockModule extends ConfigurableLockModule {}
