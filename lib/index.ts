export { LockModule } from './nest/lock.module.js';
export { LockService, type LockStats } from './nest/lock.service.js';
export { LOCK_STORE, LOCK_REDIS_CLIENT, type LockRedisClient } from './nest/lock-store.tokens.js';
export { DistributedLock } from './nest/decorators/distributed-lock.decorator.js';
export {
  LockExceptionFilter,
  lockErrorBody,
  type LockErrorBody,
} from './nest/filters/lock-exception.filter.js';
export type {
  DistributedLockOptions,
  OnBusy,
  OnLostCall,
} from './nest/interfaces/distributed-lock-options.interface.js';
export type { LockKeySource } from './nest/keys/lock-key.resolver.js';
export type {
  LockModuleOptions,
  LockOptionsFactory,
  RedisClusterConfig,
} from './nest/interfaces/lock-module-options.interface.js';
export type {
  LockOptions,
  OnLost,
  WithLockOptions,
} from './engine/request/lock-options.interface.js';
export type { Lock } from './engine/lock.interface.js';
export type { LockEvent, LockEventType, StoreEvent, StoreOperation } from './engine/lock.events.js';
export { currentLock } from './engine/hold/held-lock.js';
export {
  ACQUIRE_CHANNEL,
  RELEASE_CHANNEL,
  EXTEND_CHANNEL,
  type AcquireTrace,
  type ReleaseTrace,
  type ExtendTrace,
  type TraceOutcome,
} from './engine/lock.events.js';
export {
  fencedWrite,
  MAX_FENCED_WRITES,
  type FencedWrite,
  type RedisWrite,
} from './stores/redis/fenced-write.js';
export { MAX_KEYS_PER_LOCK } from './engine/request/lock-request.js';
export {
  LockError,
  LockBusyError,
  LockLostError,
  LockStoreError,
  LockShutdownError,
  LockStoreRefusedError,
  LockOverloadError,
  type LockStoreRefusal,
  LockKeyError,
  LockOptionsError,
  StaleFenceError,
  type LockLossReason,
} from './errors/lock.errors.js';
// The one store type an application names (`store`, `LOCK_STORE`). The contract's protocol
// types and the store classes are the store authors' API: `nestjs-distributed-lock/store`.
export type {
  LockStore,
  LockKind,
  ReleaseResult,
  ExtendResult,
  NodeOutcome,
  StoreClient,
} from './stores/lock-store.interface.js';
export type { InspectOptions, ListOptions } from './engine/lock-inspections.js';
export type {
  LockInspection,
  LockSummary,
  LockHolder,
  LockWaiter,
  LockProcess,
  LockOwner,
  InspectedKind,
} from './stores/lock-inspection.interface.js';
export type { ReplicaAcknowledgement } from './stores/redis/redis-lock-store-options.interface.js';
export type { RedlockOptions } from './stores/redlock/redlock-options.js';
