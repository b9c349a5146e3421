export { LockModule } from './nest/lock.module.js';
export { LockService } from './nest/lock.service.js';
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
export type { LockOptions, WithLockOptions } from './engine/request/lock-options.interface.js';
export type { OnLost } from './engine/hold/lock-loss.js';
export type { Lock } from './engine/lock.interface.js';
export type { LockEvent, LockEventType, StoreEvent } from './engine/lock.events.js';
export { currentLock } from './engine/hold/lock-context.js';
export {
  ACQUIRE_CHANNEL,
  RELEASE_CHANNEL,
  EXTEND_CHANNEL,
  type AcquireTrace,
  type ReleaseTrace,
  type ExtendTrace,
  type TraceOutcome,
} from './engine/lock-tracing.js';
export {
  fencedWrite,
  MAX_FENCED_WRITES,
  type FencedWrite,
  type RedisWrite,
} from './stores/redis/fenced-write.js';
export { MAX_KEYS_PER_LOCK } from './engine/request/lock-key.validation.js';
export {
  LockError,
  LockBusyError,
  LockLostError,
  LockStoreError,
  LockShutdownError,
  LockKeyError,
  LockOptionsError,
  StaleFenceError,
  type LockLossReason,
} from './errors/lock.errors.js';
export type {
  LockStore,
  LockKind,
  SharedLockType,
  AcquireRequest,
  AcquireAttempt,
  LeaseExtension,
  ReleaseOptions,
  ReleaseReport,
  ReleaseResult,
  ReleaseListener,
  ExtendResult,
  WaiterLists,
  NodeOutcome,
} from './stores/lock-store.interface.js';
export { RedisLockStore } from './stores/redis/redis-lock.store.js';
export type {
  RedisLockStoreOptions,
  ReplicaAcknowledgement,
} from './stores/redis/redis-lock-store-options.interface.js';
export {
  RedlockLockStore,
  type RedlockLockStoreOptions,
} from './stores/redlock/redlock-lock.store.js';
export type { RedlockOptions } from './stores/redlock/redlock-options.js';
