import type { Redis, RedisOptions } from 'ioredis';
import type { LockStore } from '../stores/lock-store.interface.js';
import type { LockOptions } from './lock-options.interface.js';

/** Options of `LockModule.forRoot()` / `forRootAsync()`. Give `redis` or `store`, not both. */
export interface LockModuleOptions {
  /**
   * The Redis to lock on: an ioredis `Redis` client (left open at shutdown, since it is yours),
   * ioredis connection options, or a `redis://` URL (the module then creates the client, and
   * closes it at shutdown).
   * @default undefined
   */
  redis?: Redis | RedisOptions | string;
  /**
   * Any `LockStore` instead of `redis`, e.g. `MemoryLockStore` from
   * `nestjs-distributed-lock/testing` in unit tests. Left open at shutdown.
   * @default undefined
   */
  store?: LockStore;
  /**
   * Prepended to every key name in the store, so lock keys are easy to find and cannot clash
   * with application data.
   * @default 'lock:'
   */
  keyPrefix?: string;
  /**
   * Defaults for every acquisition; per-call options override them.
   * @default { ttl: 30000, wait: 10000, autoRenew: true, fencing: false }
   */
  defaults?: Omit<LockOptions, 'signal'>;
  /**
   * Longest one store call may take, in ms, before it fails with `LockStoreError`. Keeps an
   * unreachable Redis from stalling requests for ioredis' whole reconnect budget.
   * @default 5000
   */
  storeTimeout?: number;
  /**
   * HTTP status carried by `LockBusyError`, which Nest answers with when a lock is busy
   * (e.g. 423 Locked or 429 Too Many Requests).
   * @default 409
   */
  busyStatusCode?: number;
  /**
   * Longest a waiter sleeps between attempts when no release notification arrives (a lost
   * message, or a holder that let its lease run out). Waiters are normally woken at once.
   * @default 1000
   */
  pollCap?: number;
}
