import type { Cluster, Redis } from 'ioredis';
import type { LockStore } from '../stores/lock-store.interface.js';
import { RedisLockStore } from '../stores/redis/redis-lock.store.js';
import { RedlockLockStore } from '../stores/redlock/redlock-lock.store.js';
import type { LockService } from './lock.service.js';

/** Injects the `LockStore` the locks are taken in: `@Inject(LOCK_STORE) store: LockStore`. */
export const LOCK_STORE = Symbol('LOCK_STORE');

/**
 * Injects the ioredis client the locks use: a `Redis` (one server or Sentinel) or a `Cluster`;
 * Redlock's node clients as an array; `undefined` with a custom `store`. Use it for your own
 * commands, e.g. fenced writes on the same server; do not close it, the module does.
 */
export const LOCK_REDIS_CLIENT = Symbol('LOCK_REDIS_CLIENT');

/** What `LOCK_REDIS_CLIENT` injects. */
export type LockRedisClient = Redis | Cluster | readonly Redis[] | undefined;

export function storeOf(locks: LockService): LockStore {
  return locks.engine.store;
}

export function redisClientOf(locks: LockService): LockRedisClient {
  const { store } = locks.engine;
  if (store instanceof RedisLockStore) return store.client;
  if (store instanceof RedlockLockStore) return store.clients;
  return undefined;
}
