import {
  LockBusyError,
  LockOptionsError,
  LockStoreError,
  type LockError,
  type NodeOutcome,
} from '../../errors/lock.errors.js';
import type { EngineContext } from './engine-context.js';
import { describeKind, leaseTtlOf, type LockRequest } from '../request/lock-request.js';
import type { LockKind } from '../../stores/lock-store.interface.js';
import type { AttemptOutcome, Grant } from '../wait/wait.types.js';

/**
 * Why a request gets no lock: busy, with the per-node answers of its last attempt (Redlock),
 * unless its grants came too late to hold (then the late grant's error says so).
 */
export class Refusals {
  private readonly lateGrants = new LateGrants();
  private readonly lastNodes = new WeakMap<LockRequest, readonly NodeOutcome[]>();

  constructor(private readonly context: EngineContext) {}

  /** Gives a late grant back; the request tries again at once. */
  lateGrant(request: LockRequest, grant: Grant): AttemptOutcome {
    return this.lateGrants.giveBack(this.context, request, grant);
  }

  /** Keeps the per-node answers of a failed attempt, for the request's `LockBusyError`. */
  noteNodes(request: LockRequest, nodes: readonly NodeOutcome[] | undefined): void {
    if (nodes) this.lastNodes.set(request, nodes);
  }

  errorFor(request: LockRequest): LockError {
    const late = this.lateGrants.errorFor(request);
    if (late) return late;
    const waited = performance.now() - request.startedAt;
    this.context.emit({ type: 'busy', key: request.label, waited });
    const { busyStatusCode } = this.context.config;
    const { wait } = request.options;
    const nodes = this.lastNodes.get(request);
    return new LockBusyError(request.label, { wait, waited, statusCode: busyStatusCode, nodes });
  }
}

/** A late grant as an attempt's outcome: try again at once. */
const LATE: AttemptOutcome = Object.freeze({ pttl: 0, late: true });

/**
 * Grants whose answer came after their lease had ended: nobody may act on them, since another
 * holder may have the keys already. They are given back, and the request tries again; if it
 * gets no lock, its error says why.
 */
export class LateGrants {
  /** How long the answer to a request's last late grant took. */
  private readonly took = new WeakMap<LockRequest, number>();

  giveBack(context: EngineContext, request: LockRequest, grant: Grant): AttemptOutcome {
    context.giveBack(request.fullKeys, grant.token, request.kind);
    this.took.set(request, performance.now() - grant.startedAt);
    return LATE;
  }

  /** The error of a request that had a late grant and got no lock, if it had one. */
  errorFor(request: LockRequest): LockStoreError | undefined {
    const took = this.took.get(request);
    return took === undefined ? undefined : lateGrantError(request, took);
  }
}

/** A request got no lock because every grant it had came back after its lease had ended. */
export function lateGrantError(request: LockRequest, took: number): LockStoreError {
  return new LockStoreError(
    request.label,
    `the store's answer came ${Math.round(took)} ms after the request, later than the lease of ` +
      `${leaseTtlOf(request)} ms, so the lock was given back rather than held without a valid lease. ` +
      'Check the Redis latency, or use a longer `ttl`.',
  );
}

/** An acquire that found the key held as another kind of lock, or with another limit. */
export function kindConflict(label: string, kind: LockKind, heldAs: string): LockOptionsError {
  return new LockOptionsError(
    `Lock "${label}": asked as ${describeKind(kind)}, but it is held as ${heldAs}. ` +
      'Everyone locking one key must use the same kind of lock and the same limit.',
    label,
  );
}
