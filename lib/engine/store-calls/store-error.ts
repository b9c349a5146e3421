import { LockError, LockStoreError, LockStoreRefusedError } from '../../errors/lock.errors.js';
import { storeRefusalOf } from '../../stores/store-refusals.js';

/**
 * A store call's failure as the caller hears it: a `LockError` as is; an error reply that
 * retrying cannot fix (NOPERM, WRONGTYPE, READONLY, a script error, a NOSCRIPT that outlived
 * the reload) as `LockStoreRefusedError`, naming what to grant or fix; anything else as
 * `LockStoreError`. `prefix` is the module's key prefix, which the ACL advice names.
 */
export function asStoreError(
  error: unknown,
  key: string | undefined,
  what: string,
  prefix: string,
): LockError {
  if (error instanceof LockError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  const refusal = storeRefusalOf(error, prefix);
  if (!refusal) return new LockStoreError(key, `${what} failed in the store: ${reason}`, error);
  const { kind, refused, advice } = refusal;
  const detail = `the store refused ${what}: ${advice} See node_modules/nestjs-distributed-lock/docs/acl.md. Redis said: ${reason}`;
  return new LockStoreRefusedError(key, detail, kind, refused, error);
}
