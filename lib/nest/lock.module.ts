import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { LockExceptionFilter } from './filters/lock-exception.filter.js';
import { ConfigurableLockModule } from './lock.module-definition.js';
import { LockService } from './lock.service.js';

/**
 * Registers `LockService`, and a filter that answers lock errors over HTTP, RPC and WebSocket
 * without logging expected outcomes (see `LockExceptionFilter`).
 * `LockModule.forRoot({ redis: 'redis://localhost:6379' })`, or `forRootAsync({ imports, inject,
 * useFactory })`; add `isGlobal: true` to register it once.
 */
@Module({
  providers: [LockService, { provide: APP_FILTER, useClass: LockExceptionFilter }],
  exports: [LockService],
})
export class LockModule extends ConfigurableLockModule {}
