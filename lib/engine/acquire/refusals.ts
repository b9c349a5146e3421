import {
  LockBusyError,
  LockStoreError,
  type LockError,
  type NodeOutcome,
} from '../../errors/lock.errors.js';
import type { EngineContext } from '../engine-context.js';
import { leaseTtlOf, type LockRequest } from '../request/lock-request.js';
import type { AttemptOutcome, Grant } from '../wait/wait.types.js';

/**
 * Why a request gets no lock: busy, with the per-node answers of its last attempt (Redlock),
 * unless its wins came too late to hold (then the late win's error says so).
 */
export class Refusals {
  private readonly lateWins = new LateWins();
  private readonly lastNodes = new WeakMap<LockRequest, readonly NodeOutcome[]>();

  constructor(private readonly context: EngineContext) {}

  /** Gives a late win back; the request tries again at once. */
  lateWin(request: LockRequest, grant: Grant): AttemptOutcome {
    return this.lateWins.giveBack(this.context, request, grant);
  }

  /** Keeps the per-node answers of a failed attempt, for the request's `LockBusyError`. */
  noteNodes(request: LockRequest, nodes: readonly NodeOutcome[] | undefined): void {
    if (nodes) this.lastNodes.set(request, nodes);
  }

  errorFor(request: LockRequest): LockError {
    const late = this.lateWins.errorFor(request);
    if (late) return late;
    const waited = performance.now() - request.startedAt;
    this.context.emit({ type: 'busy', key: request.label, waited });
    const { busyStatusCode } = this.context.config;
    const { wait } = request.options;
    const nodes = this.lastNodes.get(request);
    return new LockBusyError(request.label, { wait, waited, statusCode: busyStatusCode, nodes });
  }
}

/** A late win as an attempt's outcome: try again at once. */
const LATE: AttemptOutcome = Object.freeze({ pttl: 0, late: true });

/**
 * Wins whose answer came after their lease had ended: nobody may act on them, since another
 * holder may have the keys already. They are given back, and the request tries again; if it
 * gets no lock, its error says why.
 */
export class LateWins {
  /** How long the answer to a request's last late win took. */
  private readonly took = new WeakMap<LockRequest, number>();

  giveBack(context: EngineContext, request: LockRequest, grant: Grant): AttemptOutcome {
    context.giveBack(request.fullKeys, grant.token, request.kind);
    this.took.set(request, performance.now() - grant.startedAt);
    return LATE;
  }

  /** The error of a request that had a late win and got no lock, if it had one. */
  errorFor(request: LockRequest): LockStoreError | undefined {
    const took = this.took.get(request);
    return took === undefined ? undefined : lateGrantError(request, took);
  }
}

/** True once a grant's lease may be over in the store: it must not be handed to a holder. */
export function isLate(grant: Grant): boolean {
  return performance.now() >= grant.expiresAt;
}

/** A request got no lock because every win it had came back after its lease had ended. */
export function lateGrantError(request: LockRequest, took: number): LockStoreError {
  return new LockStoreError(
    request.label,
    `the store's answer came ${Math.round(took)} ms after the request, later than the lease of ` +
      `${leaseTtlOf(request)} ms, so the lock was given back rather than held without a valid lease. ` +
      'Check the Redis latency, or use a longer `ttl`.',
  );
}
