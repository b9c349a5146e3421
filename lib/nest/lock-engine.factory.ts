import { LockEngine } from '../engine/lock-engine.js';
import {
  hasControlCharacter,
  isBlank,
  resolveLockOptions,
} from '../engine/request/lock-request.js';
import {
  DEFAULT_LOCK_OPTIONS,
  describe,
  isPlainObject,
  validateLockOptions,
} from '../engine/request/lock-options.validation.js';
import { LockOptionsError } from '../errors/lock.errors.js';
import type { LockModuleOptions } from './interfaces/lock-module-options.interface.js';
import {
  DEFAULT_BUSY_STATUS_CODE,
  DEFAULT_KEY_PREFIX,
  DEFAULT_LOCAL_HANDOFFS,
  DEFAULT_POLL_CAP,
  DEFAULT_SHUTDOWN_TIMEOUT,
  DEFAULT_STORE_TIMEOUT,
} from './lock.constants.js';
import { checkConnectionTarget, provideStore } from './lock-store.factory.js';
import { lockLog } from './lock.logger.js';

/*
 * Builds the engine from the module's options, checked at bootstrap: defaults, limits, logging
 * and the store.
 */

const knownModuleOptions = new Set([
  'redis',
  'client',
  'redlock',
  'redlockOptions',
  'replicas',
  'store',
  'keyPrefix',
  'defaults',
  'storeTimeout',
  'busyStatusCode',
  'pollCap',
  'localHandoffs',
  'shutdownTimeout',
  'logger',
  'instanceId',
]);

/** Validates module options at bootstrap and builds the engine with its store. */
export function createLockEngine(options: LockModuleOptions): LockEngine {
  validateModuleOptions(options);
  validateLockOptions(options.defaults, 'LockModule "defaults"');
  const ownOptions = ['signal', 'limit', 'mode'].filter((name) => name in (options.defaults ?? {}));
  if (ownOptions.length > 0) {
    throw new LockOptionsError(
      `LockModule "defaults": "${ownOptions[0]}" belongs to one lock, not to the defaults.`,
    );
  }
  const { store, close } = provideStore(options);
  return new LockEngine({
    store,
    closeStore: close,
    keyPrefix: options.keyPrefix ?? DEFAULT_KEY_PREFIX,
    defaults: resolveLockOptions(DEFAULT_LOCK_OPTIONS, options.defaults),
    storeTimeout: options.storeTimeout ?? DEFAULT_STORE_TIMEOUT,
    pollCap: options.pollCap ?? DEFAULT_POLL_CAP,
    localHandoffs: options.localHandoffs ?? DEFAULT_LOCAL_HANDOFFS,
    busyStatusCode: options.busyStatusCode ?? DEFAULT_BUSY_STATUS_CODE,
    shutdownTimeout: options.shutdownTimeout ?? DEFAULT_SHUTDOWN_TIMEOUT,
    log: lockLog(options.logger),
    instanceId: options.instanceId,
  });
}

function validateModuleOptions(options: LockModuleOptions): void {
  if (!isPlainObject(options)) {
    throw new LockOptionsError(`LockModule options must be an object, got ${describe(options)}.`);
  }
  for (const name of Object.keys(options)) {
    if (!knownModuleOptions.has(name)) {
      // isGlobal never gets here (the module takes it), but it is a LockModule option too.
      const known = [...knownModuleOptions, 'isGlobal'].join(', ');
      throw new LockOptionsError(`LockModule: unknown option "${name}". Known options: ${known}.`);
    }
  }
  const { redis, redlock, store, keyPrefix, storeTimeout, busyStatusCode, pollCap } = options;
  const { replicas, localHandoffs } = options;
  if ([redis, redlock, store].filter((target) => target !== undefined).length !== 1) {
    throw new LockOptionsError(
      'LockModule: give exactly one of "redis" (a client, options or URL), "redlock" (a list of ' +
        'independent masters) or "store" (a LockStore).',
    );
  }
  if (redis !== undefined) checkConnectionTarget(redis, 'redis', options.client);
  if (redlock !== undefined) {
    if (!Array.isArray(redlock))
      throw new LockOptionsError('LockModule "redlock" must be an array of Redis nodes.');
    redlock.forEach((node, i) => checkConnectionTarget(node, `redlock[${i}]`, options.client));
  }
  if (
    keyPrefix !== undefined &&
    (typeof keyPrefix !== 'string' || hasControlCharacter(keyPrefix))
  ) {
    throw new LockOptionsError(
      `LockModule "keyPrefix" must be a string without control characters, got ${describe(keyPrefix)}.`,
    );
  }
  if (replicas !== undefined) checkReplicas(replicas);
  checkMilliseconds(storeTimeout, 'storeTimeout');
  checkMilliseconds(pollCap, 'pollCap');
  checkCount(options.shutdownTimeout, 'shutdownTimeout');
  checkLogger(options.logger);
  checkInstanceId(options.instanceId);
  checkCount(localHandoffs, 'localHandoffs');
  const validStatus =
    Number.isInteger(busyStatusCode) && busyStatusCode! >= 400 && busyStatusCode! < 600;
  if (busyStatusCode !== undefined && !validStatus) {
    throw new LockOptionsError(
      `LockModule "busyStatusCode" must be an HTTP error status (400–599), got ${describe(busyStatusCode)}.`,
    );
  }
}

function checkReplicas(replicas: LockModuleOptions['replicas']): void {
  const { count, timeout } = (isPlainObject(replicas) ? replicas : {}) as {
    count?: unknown;
    timeout?: unknown;
  };
  const wholePositive = (value: unknown): boolean =>
    Number.isInteger(value) && (value as number) > 0;
  if (!wholePositive(count) || (timeout !== undefined && !wholePositive(timeout))) {
    throw new LockOptionsError(
      'LockModule "replicas" must be { count: N ≥ 1, timeout?: ms ≥ 1 }, e.g. { count: 1, timeout: 100 }.',
    );
  }
}

function checkInstanceId(id: unknown): void {
  if (id === undefined || (typeof id === 'string' && !isBlank(id) && !hasControlCharacter(id))) {
    return;
  }
  throw new LockOptionsError(
    `LockModule "instanceId" must be a name without control characters, got ${describe(id)}.`,
  );
}

function checkLogger(logger: unknown): void {
  if (logger === undefined || logger === false) return;
  const methods = ['log', 'error', 'warn'] as const;
  if (
    typeof logger === 'object' &&
    logger &&
    methods.every((m) => typeof (logger as Record<string, unknown>)[m] === 'function')
  )
    return;
  throw new LockOptionsError(
    `LockModule "logger" must be a Nest LoggerService (log, error, warn) or false, got ${describe(logger)}.`,
  );
}

/** Whole milliseconds: some of these reach Redis (`PX`), which refuses a fraction. */
function checkMilliseconds(value: unknown, name: string): void {
  if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) > 0)) {
    throw new LockOptionsError(
      `LockModule "${name}" must be a positive whole number of ms, got ${describe(value)}.`,
    );
  }
}

function checkCount(value: unknown, name: string): void {
  if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) {
    throw new LockOptionsError(
      `LockModule "${name}" must be a whole number, 0 or more, got ${describe(value)}.`,
    );
  }
}
