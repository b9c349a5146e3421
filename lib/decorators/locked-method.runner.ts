import { Observable, type Subscription } from 'rxjs';
import type { LockEngine } from '../core/lock-engine.js';
import type { Lock } from '../core/lock.interface.js';
import type { LockRequest } from '../core/lock-request.js';
import { LockBusyError } from '../errors/lock.errors.js';
import type { OnBusy } from '../interfaces/distributed-lock-options.interface.js';
import type { LockOptions } from '../interfaces/lock-options.interface.js';
import type { KeyResolver } from '../keys/lock-key.resolver.js';

/** Everything `@DistributedLock` decided at decoration time. */
export interface LockedMethodPlan {
  /** `Class.method`, for messages. */
  readonly method: string;
  readonly resolveKeys: KeyResolver;
  readonly options: LockOptions;
  readonly onBusy: OnBusy;
  /** The method is declared to return an Observable: lock per subscription. */
  readonly returnsObservable: boolean;
}

/** Runs one call of a decorated method under its lock. */
export function runLockedMethod(
  engine: LockEngine,
  plan: LockedMethodPlan,
  args: unknown[],
  invoke: () => unknown,
): unknown {
  if (plan.returnsObservable) return lockedStream(engine, plan, args, invoke);
  return lockedCall(engine, plan, args, invoke);
}

async function lockedCall(
  engine: LockEngine,
  plan: LockedMethodPlan,
  args: unknown[],
  invoke: () => unknown,
) {
  const request = engine.prepare(plan.resolveKeys(args, plan.method), plan.options);
  let lock: Lock;
  try {
    lock = await engine.acquireRequest(request);
  } catch (error) {
    return whenBusy(plan, error, args);
  }
  try {
    return await engine.runHolding(lock, request.fullKeys, invoke);
  } finally {
    await lock.release().catch(() => undefined);
  }
}

/** Holds the lock from subscription until complete, error or unsubscribe; each subscription locks anew. */
function lockedStream(
  engine: LockEngine,
  plan: LockedMethodPlan,
  args: unknown[],
  invoke: () => unknown,
) {
  return new Observable<unknown>((subscriber) => {
    let lock: Lock | undefined;
    let inner: Subscription | undefined;
    let closed = false;
    const release = (): void => {
      lock?.release().catch(() => undefined);
      lock = undefined;
    };
    const start = (request: LockRequest, held: Lock): void => {
      if (closed) return void held.release().catch(() => undefined);
      lock = held;
      const source = engine.runHolding(held, request.fullKeys, invoke) as Observable<unknown>;
      inner = source.subscribe({
        next: (value) => subscriber.next(value),
        error: (error: unknown) => (release(), subscriber.error(error)),
        complete: () => (release(), subscriber.complete()),
      });
    };
    try {
      const request = engine.prepare(plan.resolveKeys(args, plan.method), plan.options);
      engine.acquireRequest(request).then(
        (held) => start(request, held),
        (error: unknown) => busyStream(plan, error, args, subscriber),
      );
    } catch (error) {
      subscriber.error(error);
    }
    return () => {
      closed = true;
      inner?.unsubscribe();
      release();
    };
  });
}

function busyStream(
  plan: LockedMethodPlan,
  error: unknown,
  args: unknown[],
  subscriber: { next(value: unknown): void; error(error: unknown): void; complete(): void },
): void {
  try {
    const fallback = whenBusy(plan, error, args);
    if (fallback instanceof Observable) return void fallback.subscribe(subscriber);
    if (fallback !== undefined) subscriber.next(fallback);
    subscriber.complete();
  } catch (thrown) {
    subscriber.error(thrown);
  }
}

function whenBusy(plan: LockedMethodPlan, error: unknown, args: unknown[]): unknown {
  if (!(error instanceof LockBusyError) || plan.onBusy === 'throw') throw error;
  if (plan.onBusy === 'skip') return undefined;
  return plan.onBusy(error, ...args);
}
