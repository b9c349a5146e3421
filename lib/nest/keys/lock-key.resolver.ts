import { LockKeyError } from '../../errors/lock.errors.js';
import { compileKeyTemplate, type KeyBuilder } from './key-template.compiler.js';

/** What `@DistributedLock` accepts as its key. */
export type LockKeySource =
  | string
  | readonly string[]
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- so typed functions such as (id: string) => string fit
  | ((...args: any[]) => string | readonly string[]);

/** Turns a method call's arguments into the lock's key(s). */
export type KeyResolver = (args: readonly unknown[], method: string) => string | readonly string[];

/** Compiles a key source at decoration time; malformed templates throw `LockKeyError` here. */
export function compileLockKey(source: LockKeySource, where: string): KeyResolver {
  if (typeof source === 'function') return (args) => source(...args);
  if (typeof source === 'string') return compileKeyTemplate(source, where);
  if (
    Array.isArray(source) &&
    source.length > 0 &&
    source.every((item) => typeof item === 'string')
  ) {
    const builders: KeyBuilder[] = source.map((template) => compileKeyTemplate(template, where));
    return (args, method) => builders.map((build) => build(args, method));
  }
  throw new LockKeyError(
    `${where}: the lock key must be a template string, a non-empty array of them, or a function of the method's arguments.`,
  );
}
