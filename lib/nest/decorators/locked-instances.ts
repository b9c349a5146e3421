import type { ModulesContainer } from '@nestjs/core';
import { LockOptionsError } from '../../errors/lock.errors.js';

/** Where Nest injects the app's `LockService` into instances with decorated methods. */
export const LOCK_SERVICE = Symbol('nestjs-distributed-lock:LockService');

/** The decorated methods of a class, on its prototype, for the check at bootstrap. */
const LOCKED_METHODS = Symbol('nestjs-distributed-lock:locked-methods');

type Prototype = object & { [LOCKED_METHODS]?: string[] };

/** Notes that `method` (`Class.method`) of this prototype runs under `@DistributedLock`. */
export function markLockedMethod(prototype: object, method: string): void {
  const own = Object.prototype.hasOwnProperty.call(prototype, LOCKED_METHODS);
  const methods = own ? (prototype as Prototype)[LOCKED_METHODS]! : [];
  methods.push(method);
  if (!own) Object.defineProperty(prototype, LOCKED_METHODS, { value: methods });
}

/**
 * Fails bootstrap, rather than every call, when Nest made an instance with a decorated method in
 * a module that does not see `LockService`. Request-scoped and transient instances are made
 * later, per request; their calls still fail with the same error.
 */
export function assertLockedInstancesWired(modules: ModulesContainer): void {
  for (const module of modules.values()) {
    for (const wrapper of [...module.controllers.values(), ...module.providers.values()]) {
      const instance = wrapper.isDependencyTreeStatic() ? wrapper.instance : undefined;
      if (!instance || typeof instance !== 'object') continue;
      const method = (instance as Prototype)[LOCKED_METHODS]?.[0];
      if (method && (instance as Record<symbol, unknown>)[LOCK_SERVICE] === undefined)
        throw notManaged(method);
    }
  }
}

export function notManaged(method: string): LockOptionsError {
  const className = method.split('.')[0];
  return new LockOptionsError(
    `${method} is decorated with @DistributedLock, but this ${className} instance has no LockService. ` +
      `Import LockModule.forRoot(...) or forRootAsync(...) in the module that provides ${className} ` +
      '(or register it once with isGlobal: true). Instances created with `new` are not managed by Nest: ' +
      'let Nest create them, or use LockService.withLock() directly.',
  );
}
