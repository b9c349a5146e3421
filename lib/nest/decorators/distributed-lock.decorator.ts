import { Inject, Optional } from '@nestjs/common';
import { checkOnLost, validateLockOptions } from '../../engine/request/lock-options.validation.js';
import { LockOptionsError } from '../../errors/lock.errors.js';
import type {
  DistributedLockOptions,
  OnBusy,
} from '../interfaces/distributed-lock-options.interface.js';
import { compileLockKey, type LockKeySource } from '../keys/lock-key.resolver.js';
import { LockService } from '../lock.service.js';
import { LOCK_SERVICE, markLockedMethod } from './locked-instances.js';
import { lockedMethod, type LockedMethodPlan, type Method } from './locked-method.runner.js';

/**
 * Runs the method while holding a distributed lock, renewed as long as the method runs.
 *
 * The key is a template (`'seckill:{0}'`, `'order:{1.user.id}'`), an array of templates (one
 * lock over all keys, taken all-or-nothing), or a function of the method's arguments. Works on
 * any method of a class Nest instantiates (controllers, providers, cron jobs, event and message
 * handlers), above or below Nest's own decorators. The method's result becomes a Promise (an
 * Observable result, when declared as the return type, is locked per subscription).
 */
export function DistributedLock(
  key: LockKeySource,
  options: DistributedLockOptions = {},
): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const method = `${target.constructor.name}.${String(propertyKey)}`;
    const original = descriptor.value as unknown;
    if (typeof original !== 'function') {
      throw new LockOptionsError(`@DistributedLock on ${method}: it decorates methods only.`);
    }
    const plan = createPlan(
      method,
      key,
      options,
      Reflect.getMetadata('design:returntype', target, propertyKey),
    );
    // Optional: an instance made with `new`, or in a module without LockModule, still
    // constructs; LockService fails bootstrap for the latter, and a call fails for both.
    Inject(LockService)(target, LOCK_SERVICE);
    Optional()(target, LOCK_SERVICE);
    markLockedMethod(target, method);
    const locked = lockedMethod(plan, original as Method);
    copyIdentity(original as Method, locked);
    (descriptor as TypedPropertyDescriptor<unknown>).value = locked;
  };
}

function createPlan(
  method: string,
  key: LockKeySource,
  options: DistributedLockOptions,
  returnType: unknown,
): LockedMethodPlan {
  const where = `@DistributedLock on ${method}`;
  validateLockOptions(options, where, new Set(['onBusy', 'onLost']));
  const { onBusy = 'throw', onLost = 'throw', ...lockOptions } = options;
  checkOnBusy(onBusy, where);
  checkOnLost(onLost, where);
  // A job skipped when busy must not queue behind the instance that runs it.
  const wait = lockOptions.wait ?? (onBusy === 'skip' ? 0 : undefined);
  return {
    method,
    resolveKeys: compileLockKey(key, where),
    options: Object.freeze({
      autoRenew: true,
      ...lockOptions,
      ...(wait === undefined ? {} : { wait }),
    }),
    onBusy,
    onLost,
    returnsObservable: isObservableClass(returnType),
  };
}

function checkOnBusy(onBusy: OnBusy, where: string): void {
  if (onBusy !== 'throw' && onBusy !== 'skip' && typeof onBusy !== 'function') {
    throw new LockOptionsError(`${where}: "onBusy" must be 'throw', 'skip' or a function.`);
  }
}

function isObservableClass(type: unknown): boolean {
  const prototype = (type as { prototype?: Record<string, unknown> } | undefined)?.prototype;
  return typeof prototype?.subscribe === 'function' && typeof prototype.pipe === 'function';
}

/** Nest's decorators keep routes, cron and event metadata on the function; carry it over. */
function copyIdentity(from: Method, to: Method): void {
  for (const metadataKey of Reflect.getOwnMetadataKeys(from)) {
    Reflect.defineMetadata(metadataKey, Reflect.getOwnMetadata(metadataKey, from), to);
  }
  Object.defineProperty(to, 'name', { value: from.name, configurable: true });
  Object.defineProperty(to, 'length', { value: from.length, configurable: true });
}
