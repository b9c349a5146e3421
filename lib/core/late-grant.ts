import { LockStoreError } from '../errors/lock.errors.js';
import type { LockRequest } from './lock-request.js';
import type { Grant } from './wait-queue.interface.js';

/** True once a grant's lease may be over in the store: it must not be handed to a holder. */
export function isLate(grant: Grant): boolean {
  return performance.now() >= grant.expiresAt;
}

/** A request got no lock because every win it had came back after its lease had ended. */
export function lateGrantError({ label, options }: LockRequest, took: number): LockStoreError {
  return new LockStoreError(
    label,
    `the store's answer came ${Math.round(took)} ms after the request, later than the lease of ` +
      `${options.ttl} ms, so the lock was given back rather than held without a valid lease. ` +
      'Check the Redis latency, or use a longer `ttl`.',
  );
}
