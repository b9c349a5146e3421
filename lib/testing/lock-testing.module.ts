import type { DynamicModule } from '@nestjs/common';
import type { LockModuleOptions } from '../nest/interfaces/lock-module-options.interface.js';
import { LockModule } from '../nest/lock.module.js';
import { MemoryLockStore } from '../stores/memory/memory-lock.store.js';

/** Options of {@link LockTestingModule.forRoot}: those of `LockModule` without `redis`. */
export type LockTestingModuleOptions = Omit<LockModuleOptions, 'redis'> & {
  /**
   * Register `LockService` for every module of the test, not only those that import this one.
   * @default true
   */
  isGlobal?: boolean;
};

/**
 * `LockModule` on an in-memory store, for tests that need a `LockService` but no Redis.
 *
 * ```ts
 * const store = new MemoryLockStore();
 * const moduleRef = await Test.createTestingModule({
 *   imports: [LockTestingModule.forRoot({ store })],
 *   providers: [ReportService],
 * }).compile();
 * // ... run the code under test, then look at the store:
 * expect(store.keys()).toEqual([]);
 * ```
 *
 * Locks are real within the test process (waiting, leases, fencing, reentrancy behave as with
 * Redis) but are not shared with other processes.
 */
export class LockTestingModule {
  /**
   * `LockModule.forRoot()` with a new `MemoryLockStore`. Pass `store` to keep a handle on the
   * store for assertions; any other `LockModule` option (`keyPrefix`, `defaults`, …) is passed
   * on. Global unless `isGlobal: false`.
   */
  static forRoot(options: LockTestingModuleOptions = {}): DynamicModule {
    return LockModule.forRoot({
      ...options,
      store: options.store ?? new MemoryLockStore(),
      isGlobal: options.isGlobal ?? true,
    });
  }
}
