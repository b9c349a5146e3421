import { Module } from '@nestjs/common';
import { ConfigurableLockModule } from './lock.module-definition.js';
import { LockService } from './lock.service.js';

/**
 * Registers `LockService`. `LockModule.forRoot({ redis: 'redis://localhost:6379' })`, or
 * `forRootAsync({ imports, inject, useFactory })`; add `isGlobal: true` to register it once.
 */
@Module({
  providers: [LockService],
  exports: [LockService],
})
export class LockModule extends ConfigurableLockModule {}
