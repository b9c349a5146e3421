import { Redis } from 'ioredis';
import { LockEngine } from './core/lock-engine.js';
import { hasControlCharacter } from './core/lock-key.validation.js';
import {
  DEFAULT_LOCK_OPTIONS,
  resolveLockOptions,
  validateLockOptions,
  describe,
} from './core/lock-options.validation.js';
import { LockOptionsError } from './errors/lock.errors.js';
import type { LockModuleOptions } from './interfaces/lock-module-options.interface.js';
import {
  DEFAULT_BUSY_STATUS_CODE,
  DEFAULT_KEY_PREFIX,
  DEFAULT_POLL_CAP,
  DEFAULT_STORE_TIMEOUT,
} from './lock.constants.js';
import type { LockStore } from './stores/lock-store.interface.js';
import { RedisLockStore } from './stores/redis/redis-lock.store.js';

const knownModuleOptions = new Set([
  'redis',
  'store',
  'keyPrefix',
  'defaults',
  'storeTimeout',
  'busyStatusCode',
  'pollCap',
]);

/** Validates module options at bootstrap and builds the engine with its store. */
export function createLockEngine(options: LockModuleOptions): LockEngine {
  validateModuleOptions(options);
  validateLockOptions(options.defaults, 'LockModule "defaults"');
  if (options.defaults && 'signal' in options.defaults) {
    throw new LockOptionsError(
      'LockModule "defaults": "signal" belongs to one acquisition, not to the defaults.',
    );
  }
  const { store, closeStore } = createStore(options);
  return new LockEngine({
    store,
    closeStore,
    keyPrefix: options.keyPrefix ?? DEFAULT_KEY_PREFIX,
    defaults: resolveLockOptions(DEFAULT_LOCK_OPTIONS, options.defaults),
    storeTimeout: options.storeTimeout ?? DEFAULT_STORE_TIMEOUT,
    pollCap: options.pollCap ?? DEFAULT_POLL_CAP,
    busyStatusCode: options.busyStatusCode ?? DEFAULT_BUSY_STATUS_CODE,
  });
}

function createStore(options: LockModuleOptions): { store: LockStore; closeStore: boolean } {
  if (options.store) return { store: options.store, closeStore: false };
  const { redis } = options;
  if (isRedisClient(redis))
    return { store: new RedisLockStore(redis, { ownsClient: false }), closeStore: true };
  const client = typeof redis === 'string' ? new Redis(redis) : new Redis(redis!);
  // An unreachable Redis must not crash the app with an unhandled 'error' event; failures
  // surface as LockStoreError on the calls that need Redis.
  client.on('error', () => undefined);
  return { store: new RedisLockStore(client, { ownsClient: true }), closeStore: true };
}

function validateModuleOptions(options: LockModuleOptions): void {
  if (!options || typeof options !== 'object') {
    throw new LockOptionsError(`LockModule options must be an object, got ${describe(options)}.`);
  }
  for (const name of Object.keys(options)) {
    if (!knownModuleOptions.has(name)) {
      throw new LockOptionsError(
        `LockModule: unknown option "${name}". Known options: ${[...knownModuleOptions].join(', ')}.`,
      );
    }
  }
  const { redis, store, keyPrefix, storeTimeout, busyStatusCode, pollCap } = options;
  if ((redis === undefined) === (store === undefined)) {
    throw new LockOptionsError(
      'LockModule: give exactly one of "redis" (a client, options or URL) or "store" (a LockStore).',
    );
  }
  if (
    redis !== undefined &&
    typeof redis !== 'string' &&
    (redis === null || typeof redis !== 'object')
  ) {
    throw new LockOptionsError(
      `LockModule "redis" must be an ioredis client, options or a URL, got ${describe(redis)}.`,
    );
  }
  if (
    keyPrefix !== undefined &&
    (typeof keyPrefix !== 'string' || hasControlCharacter(keyPrefix))
  ) {
    throw new LockOptionsError(
      `LockModule "keyPrefix" must be a string without control characters, got ${describe(keyPrefix)}.`,
    );
  }
  checkPositive(storeTimeout, 'storeTimeout');
  checkPositive(pollCap, 'pollCap');
  if (
    busyStatusCode !== undefined &&
    !(Number.isInteger(busyStatusCode) && busyStatusCode >= 400 && busyStatusCode < 600)
  ) {
    throw new LockOptionsError(
      `LockModule "busyStatusCode" must be an HTTP error status (400–599), got ${describe(busyStatusCode)}.`,
    );
  }
}

function checkPositive(value: unknown, name: string): void {
  if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
    throw new LockOptionsError(
      `LockModule "${name}" must be a positive number of ms, got ${describe(value)}.`,
    );
  }
}

function isRedisClient(value: unknown): value is Redis {
  const candidate = value as Partial<Redis> | undefined;
  return typeof candidate?.evalsha === 'function' && typeof candidate.duplicate === 'function';
}
