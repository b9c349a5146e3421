import { isObservable, Observable, type Subscriber, type Subscription } from 'rxjs';
import type { LockEngine } from '../core/lock-engine.js';
import type { Lock } from '../core/lock.interface.js';
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
): Promise<unknown> {
  const request = engine.prepare(plan.resolveKeys(args, plan.method), plan.options);
  let lock: Lock;
  try {
    lock = await engine.acquireRequest(request);
  } catch (error) {
    return whenBusy(plan, error, args);
  }
  let result: unknown;
  try {
    result = await engine.runHolding(lock, request.fullKeys, invoke);
  } finally {
    await lock.release().catch(() => undefined);
  }
  // The return type was not visible (a type-only import, or a compiler without decorator
  // metadata): the stream still runs under the lock, taken again when it is subscribed.
  return isObservable(result) ? lockedStream(engine, plan, args, () => result) : result;
}

/**
 * Holds the lock from subscription until complete, error or unsubscribe; each subscription
 * locks anew. Unsubscribing while waiting for the lock gives up the wait.
 */
function lockedStream(
  engine: LockEngine,
  plan: LockedMethodPlan,
  args: unknown[],
  invoke: () => unknown,
): Observable<unknown> {
  return new Observable<unknown>((subscriber) => {
    const cancel = new AbortController();
    let lock: Lock | undefined;
    let inner: Subscription | undefined;
    const release = (): Promise<unknown> => {
      const held = lock;
      lock = undefined;
      return held ? held.release().catch(() => undefined) : Promise.resolve();
    };
    // The lock is gone by the time the subscriber hears the end, as with a Promise result.
    const end = (notify: () => void): void => void release().then(notify);
    const run = (held: Lock, fullKeys: readonly string[]): void => {
      if (cancel.signal.aborted) return void held.release().catch(() => undefined);
      lock = held;
      // Subscribing inside the lock's context makes nested locked calls in the stream reentrant.
      inner = engine.runHolding(held, fullKeys, () => subscribeTo(invoke(), subscriber, end));
    };
    try {
      const signals = [plan.options.signal, cancel.signal].filter((s): s is AbortSignal => !!s);
      const options = { ...plan.options, signal: AbortSignal.any(signals) };
      const request = engine.prepare(plan.resolveKeys(args, plan.method), options);
      engine
        .acquireRequest(request)
        .then(
          (held) => run(held, request.fullKeys),
          (error: unknown) => cancel.signal.aborted || busyStream(plan, error, args, subscriber),
        )
        .catch((error: unknown) => end(() => subscriber.error(error)));
    } catch (error) {
      subscriber.error(error);
    }
    return () => {
      cancel.abort();
      inner?.unsubscribe();
      void release();
    };
  });
}

function subscribeTo(
  source: unknown,
  subscriber: Subscriber<unknown>,
  end: (notify: () => void) => void,
): Subscription {
  if (!isObservable(source)) {
    throw new TypeError('a method declared to return an Observable returned something else');
  }
  return source.subscribe({
    next: (value) => subscriber.next(value),
    error: (error: unknown) => end(() => subscriber.error(error)),
    complete: () => end(() => subscriber.complete()),
  });
}

function busyStream(
  plan: LockedMethodPlan,
  error: unknown,
  args: unknown[],
  subscriber: Subscriber<unknown>,
): void {
  const fallback = whenBusy(plan, error, args);
  if (isObservable(fallback)) return void fallback.subscribe(subscriber);
  if (fallback !== undefined) subscriber.next(fallback);
  subscriber.complete();
}

function whenBusy(plan: LockedMethodPlan, error: unknown, args: unknown[]): unknown {
  if (!(error instanceof LockBusyError) || plan.onBusy === 'throw') throw error;
  if (plan.onBusy === 'skip') return undefined;
  return plan.onBusy(error, ...args);
}
