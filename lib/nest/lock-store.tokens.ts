import type { LockStore, StoreClient } from '../stores/lock-store.interface.js';
import type { LockService } from './lock.service.js';

/** Injects the `LockStore` the locks are taken in: `@Inject(LOCK_STORE) store: LockStore`. */
export const LOCK_STORE = Symbol('LOCK_STORE');

/**
 * Injects the Redis client the locks use (ioredis, node-redis or Valkey GLIDE: yours, or the one
 * the module made); Redlock's node clients as an array; `undefined` with a custom `store` that
 * shares no `client`.
 * Use it for your own commands, e.g. fenced writes on the same server; do not close it, the
 * module does.
 */
export const LOCK_REDIS_CLIENT = Symbol('LOCK_REDIS_CLIENT');

/** What `LOCK_REDIS_CLIENT` injects: the store's `client`. */
export type LockRedisClient = StoreClient | undefined;

export function storeOf(locks: LockService): LockStore {
  return locks.engine.store;
}

/** The store's client, once a client the module makes is made (its library loads first). */
export async function redisClientOf(locks: LockService): Promise<LockRedisClient> {
  const { store } = locks.engine;
  await (store as { clientReady?: () => Promise<void> }).clientReady?.();
  return store.client;
}
