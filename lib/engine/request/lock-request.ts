import type { LockOptions, ResolvedLockOptions } from './lock-options.interface.js';
import { validateLockKeys } from './lock-key.validation.js';
import { LockOptionsError } from '../../errors/lock.errors.js';
import { lockOptionsProblem, resolveLockOptions } from './lock-options.validation.js';
import type { Grant } from '../wait/wait.types.js';
import type { LockKind } from '../../stores/lock-store.interface.js';
import { describeKind, kindOf } from './lock-kind.js';
import { mayInherit } from '../../policy/wait-policy.js';

/** A validated acquire request: everything is checked before any store call. */
export interface LockRequest {
  /** The caller's key names, in their order, without duplicates. */
  readonly names: readonly string[];
  /** The names joined, for messages and events. */
  readonly label: string;
  /** Store keys: prefix + name. */
  readonly fullKeys: readonly string[];
  readonly options: ResolvedLockOptions;
  /** Who may hold the key with this request: from the `limit` and `mode` options. */
  readonly kind: LockKind;
  /** `performance.now()` when the acquire was called. */
  readonly startedAt: number;
}

export function prepareLockRequest(
  key: unknown,
  options: LockOptions | undefined,
  prefix: string,
  defaults: ResolvedLockOptions,
): LockRequest {
  const names = validateLockKeys(key);
  const label = names.length === 1 ? names[0] : names.join(' + ');
  const problem = lockOptionsProblem(options);
  if (problem) throw new LockOptionsError(`Lock "${label}": ${problem}`);
  const kind = kindOf(options);
  if (kind.type !== 'mutex' && names.length > 1) {
    throw new LockOptionsError(
      `Lock "${label}": ${describeKind(kind)} takes one key, got ${names.length}.`,
      label,
    );
  }
  return {
    names,
    label,
    fullKeys: names.length === 1 ? [prefix + label] : names.map((name) => prefix + name),
    options: readerOptions(kind, resolveLockOptions(defaults, options)),
    kind,
    startedAt: performance.now(),
  };
}

/** Whether the request may take over `grant`, a lease another holder here won (see `mayInherit`). */
export function canInherit(request: LockRequest, grant: Grant): boolean {
  return mayInherit(request.options, leaseTtlOf(request), grant.expiresAt - performance.now());
}

/** The lease asked of the store: never longer than `maxHold`. */
export function leaseTtlOf({ options }: LockRequest): number {
  return Math.min(options.ttl, options.maxHold ?? options.ttl);
}

/** Readers get no fence: `fencing` from the module's defaults is meant for the writers. */
function readerOptions(kind: LockKind, options: ResolvedLockOptions): ResolvedLockOptions {
  return kind.type === 'read' && options.fencing ? { ...options, fencing: false } : options;
}
