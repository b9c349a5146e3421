import { tracingChannel } from 'node:diagnostics_channel';
import { LockError } from '../errors/lock.errors.js';
import type { ExtendResult, LockKind, ReleaseResult } from '../stores/lock-store.interface.js';
import type { Lock } from './lock.interface.js';

/*
 * `node:diagnostics_channel` tracing channels, so that APM agents and OpenTelemetry can follow
 * every acquire, release and extend without patching: each call publishes `start` and `end`, and
 * `asyncStart`/`asyncEnd` when it settles, or `error`. The context object below is what every
 * subscriber receives; its outcome fields are set before `asyncStart` (Node adds `result` or
 * `error`). Callers check `tracing` first: with no subscriber, nothing is traced or allocated.
 */

export const ACQUIRE_CHANNEL = 'nestjs-distributed-lock:acquire';
export const RELEASE_CHANNEL = 'nestjs-distributed-lock:release';
export const EXTEND_CHANNEL = 'nestjs-distributed-lock:extend';

/** How a traced call ended: `'acquired'`, `'nested'` (reentrant), a release or extend result, or the error's code. */
export type TraceOutcome = 'acquired' | 'nested' | ReleaseResult | ExtendResult | string;

/** The context of a trace on `nestjs-distributed-lock:acquire`. */
export interface AcquireTrace {
  /** The key as named (keys joined with `+` for a multi-key lock). */
  readonly key: string;
  readonly kind: LockKind;
  /** The request's `wait`, ms. */
  readonly wait: number;
  /** How long the acquire took, ms; set when it settles. */
  waited?: number;
  outcome?: TraceOutcome;
  /** The fence of a fenced lock. */
  fence?: number;
  result?: Lock;
  error?: unknown;
}

/** The context of a trace on `nestjs-distributed-lock:release`. */
export interface ReleaseTrace {
  readonly key: string;
  readonly kind: LockKind;
  readonly fence?: number;
  /** How long the lock was held, ms, when the release was called. */
  readonly held: number;
  outcome?: TraceOutcome;
  result?: ReleaseResult;
  error?: unknown;
}

/** The context of a trace on `nestjs-distributed-lock:extend`: a manual `extend`, or one renewal round. */
export interface ExtendTrace {
  /** The keys extended: one lock's, or every lock a renewal round renews. */
  readonly keys: readonly string[];
  /** The lease asked for, ms (the longest, for a renewal round). */
  readonly ttl: number;
  outcome?: TraceOutcome;
  result?: unknown;
  error?: unknown;
}

const acquires = tracingChannel<AcquireTrace>(ACQUIRE_CHANNEL);
const releases = tracingChannel<ReleaseTrace>(RELEASE_CHANNEL);
const extends_ = tracingChannel<ExtendTrace>(EXTEND_CHANNEL);

/** Whether anyone listens: checked first, so that an untraced call makes no closures. */
export const tracing = {
  get acquires(): boolean {
    return acquires.hasSubscribers;
  },
  get releases(): boolean {
    return releases.hasSubscribers;
  },
  get extends(): boolean {
    return extends_.hasSubscribers;
  },
};

export function traceAcquire(
  context: AcquireTrace,
  run: () => Promise<Lock>,
  nested: (lock: Lock) => boolean,
): Promise<Lock> {
  const startedAt = performance.now();
  const settle = (outcome: TraceOutcome, fence?: number): void => {
    context.waited = performance.now() - startedAt;
    context.outcome = outcome;
    context.fence = fence;
  };
  return acquires.tracePromise(
    () =>
      run().then(
        (lock) => {
          settle(nested(lock) ? 'nested' : 'acquired', lock.fence);
          return lock;
        },
        (error: unknown) => {
          settle(codeOf(error));
          throw error;
        },
      ),
    context,
  );
}

export function traceRelease(
  context: ReleaseTrace,
  run: () => Promise<ReleaseResult>,
): Promise<ReleaseResult> {
  return releases.tracePromise(() => settled(run(), context), context);
}

export function traceExtend<T>(context: ExtendTrace, run: () => Promise<T>): Promise<T> {
  return extends_.tracePromise(() => settled(run(), context), context);
}

/** Sets the context's outcome from the call's result (a string) or its error. */
function settled<T>(call: Promise<T>, context: { outcome?: TraceOutcome }): Promise<T> {
  return call.then(
    (result) => {
      context.outcome = typeof result === 'string' ? result : 'extended';
      return result;
    },
    (error: unknown) => {
      context.outcome = codeOf(error);
      throw error;
    },
  );
}

function codeOf(error: unknown): string {
  return error instanceof LockError ? error.code : 'error';
}
