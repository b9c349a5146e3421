/**
 * `nestjs-distributed-lock/store`: the store authors' API. The `LockStore` contract with its
 * protocol types, and the stores the package ships with their options, for writing a backend
 * of your own or building a store by hand. Experimental until 1.0: it may change in a minor
 * version, since its hand-off fields follow the engine's protocol. Applications need only the
 * root entry.
 */
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
  StoreHealth,
  QuorumHealth,
  ClusterState,
  StoreClient,
} from '../stores/lock-store.interface.js';
export type {
  LockInspector,
  OwnerRegistration,
  StoreInspectOptions,
  StoreListOptions,
  LockInspection,
  LockSummary,
  LockHolder,
  LockWaiter,
  LockProcess,
  LockOwner,
  InspectedKind,
} from '../stores/lock-inspection.interface.js';
export { RedisLockStore } from '../stores/redis/redis-lock.store.js';
export type {
  RedisLockStoreOptions,
  ReplicaAcknowledgement,
} from '../stores/redis/redis-lock-store-options.interface.js';
export {
  RedlockLockStore,
  type RedlockLockStoreOptions,
} from '../stores/redlock/redlock-lock.store.js';
export type { RedlockOptions } from '../stores/redlock/redlock-options.js';
export { MemoryLockStore } from '../stores/memory/memory-lock.store.js';
