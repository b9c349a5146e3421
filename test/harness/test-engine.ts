import type { Cluster, Redis } from 'ioredis';
import { LockEngine, type LockEngineConfig } from '../../lib/engine/lock-engine.js';
import { DEFAULT_LOCK_OPTIONS } from '../../lib/engine/request/lock-options.validation.js';
import type { LockStore } from '../../lib/stores/lock-store.interface.js';
import { DEFAULT_LOCAL_HANDOFFS } from '../../lib/nest/lock.constants.js';
import { MemoryLockStore } from '../../lib/stores/memory/memory-lock.store.js';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import { storeClientFor } from './client-under-test.js';

/**
 * An engine on a Redis client the test owns (the store leaves the client open), or, when CI runs
 * the suite on another client library (LOCK_TEST_CLIENT), on a client of that library to the
 * same server, which the store closes.
 */
export function createTestEngine(
  client: Redis,
  overrides: Partial<LockEngineConfig> = {},
): LockEngine {
  return engineOn(overrides.store ?? storeUnderTest(client), overrides);
}

/** The Redis store under test, on `client`'s server (see `createTestEngine`). */
export function storeUnderTest(client: Redis | Cluster): RedisLockStore {
  const { client: target, owned } = storeClientFor(client);
  return new RedisLockStore(target, { ownsClient: owned });
}

/** An engine on any store (e.g. an ObservedStore around a cluster store), with test defaults. */
export function engineOn(store: LockStore, overrides: Partial<LockEngineConfig> = {}): LockEngine {
  return new LockEngine({
    store,
    closeStore: () => store.close(),
    keyPrefix: 'lock:',
    defaults: DEFAULT_LOCK_OPTIONS,
    storeTimeout: 2_000,
    pollCap: 1_000,
    localHandoffs: DEFAULT_LOCAL_HANDOFFS,
    busyStatusCode: 409,
    // Tests that end with locks held must not wait for them at close.
    shutdownTimeout: 0,
    ...overrides,
  });
}

/**
 * A fresh engine on a fresh `MemoryLockStore` for each test (`beforeEach`), closed after it:
 * for unit specs of the engine and the decorator's runner.
 */
export function useMemoryEngine(): {
  readonly store: MemoryLockStore;
  readonly engine: LockEngine;
} {
  const state: { store?: MemoryLockStore; engine?: LockEngine } = {};
  beforeEach(() => {
    state.store = new MemoryLockStore();
    state.engine = engineOn(state.store, { closeStore: () => Promise.resolve() });
  });
  afterEach(() => state.engine?.close());
  return {
    get store() {
      return state.store!;
    },
    get engine() {
      return state.engine!;
    },
  };
}
