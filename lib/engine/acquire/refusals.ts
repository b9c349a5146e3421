import { LockBusyError, type LockError, type NodeOutcome } from '../../errors/lock.errors.js';
import type { EngineContext } from '../engine-context.js';
import type { LockRequest } from '../request/lock-request.js';
import type { AttemptOutcome, Grant } from '../wait/wait.types.js';
import { LateWins } from './attempt-call.js';

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
