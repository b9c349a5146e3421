/** The small pieces a service's driver calls the library and reports with. */
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { kindOf } from '../../lib/engine/request/lock-request.js';
import { runLockedMethod } from '../../lib/nest/decorators/locked-method.runner.js';
import type { TakeOp, TakeOptions } from './model-ops.js';
import { classify } from './outcome-class.js';
import { now, type OutcomeRecord } from './model-records.js';

/** Resolves after `ms`, or as soon as `signal` aborts: a holder stops its work when told. */
export const sleepOr = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * Holds this process's event loop for `ms`: what a CPU-bound handler, a long JSON parse or a
 * synchronous library call does to every timer and socket of the process.
 */
export function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Nothing: the loop is held on purpose.
  }
}

/** A `@DistributedLock` call: the decorator's own runtime path, with options drawn per call. */
export function decorated(
  engine: LockEngine,
  op: TakeOp,
  options: TakeOptions,
  invoke: () => unknown,
): Promise<unknown> {
  const plan = {
    method: 'ModelService.run',
    resolveKeys: () => (op.keys.length === 1 ? op.keys[0]! : op.keys),
    options,
    onBusy: 'throw' as const,
    onLost: 'throw' as const,
    returnsObservable: false,
  };
  return runLockedMethod(engine, plan, [], invoke) as Promise<unknown>;
}

export function outcomeOf(
  svc: number,
  id: string,
  call: OutcomeRecord['call'],
  keys: readonly string[],
  opts: TakeOptions,
  start: string,
  error?: unknown,
  released?: string,
): OutcomeRecord {
  const { result, message, code, refused, reason } = classify(error);
  const wait = opts.wait ?? 10_000;
  return {
    id,
    svc,
    call,
    keys: [...keys],
    kind: kindOf(opts),
    wait,
    start,
    end: String(now()),
    result,
    message,
    ...(code !== undefined && { code }),
    ...(refused !== undefined && { refused }),
    ...(reason !== undefined && { reason }),
    ...(released !== undefined && { released }),
  };
}
