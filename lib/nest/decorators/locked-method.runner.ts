import { isObservable, Observable, throwError, type Subscriber, type Subscription } from 'rxjs';
import type { LockEngine } from '../../engine/lock-engine.js';
import type { Lock } from '../../engine/lock.interface.js';
import {
  LockBusyError,
  LockLostError,
  LockStoreError,
  LockStoreRefusedError,
} from '../../errors/lock.errors.js';
import type { OnBusy, OnLostCall } from '../interfaces/distributed-lock-options.interface.js';
import { lossOf } from '../../engine/hold/held-lock.js';
import { holdWhile } from '../../engine/lock-engine.js';
import type { OnLost } from '../../engine/request/lock-options.interface.js';
import type { LockOptions } from '../../engine/request/lock-options.interface.js';
import type { KeyResolver } from '../keys/lock-key.resolver.js';
import { LockService } from '../lock.service.js';
import { LOCK_SERVICE, notManaged } from './locked-instances.js';

/*
 * Runs a decorated method under its lock: a Promise held until it settles, an Observable until it
 * ends.
 */

export type Method = (...args: unknown[]) => unknown;

/** Everything `@DistributedLock` decided at decoration time. */
export interface LockedMethodPlan {
  /** `Class.method`, for messages. */
  readonly method: string;
  readonly resolveKeys: KeyResolver;
  /** Checked when the method was decorated, and frozen: calls do not check them again. */
  readonly options: LockOptions;
  readonly onBusy: OnBusy;
  readonly onLost: OnLostCall;
  /** The method is declared to return an Observable: lock per subscription. */
  readonly returnsObservable: boolean;
}

/**
 * The method `@DistributedLock` puts in place of `original`: each call runs under its lock,
 * taken through the `LockService` Nest injected into the instance.
 */
export function lockedMethod(plan: LockedMethodPlan, original: Method): Method {
  return function (this: Record<symbol, unknown>, ...args: unknown[]): unknown {
    const service = this?.[LOCK_SERVICE];
    if (!(service instanceof LockService)) {
      // Fail the way every other outcome arrives: as a rejection (or a stream error).
      const error = notManaged(plan.method);
      return plan.returnsObservable ? throwError(() => error) : Promise.reject(error);
    }
    return runLockedMethod(service.engine, plan, args, () => original.apply(this, args));
  };
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
  const request = engine.prepare(plan.resolveKeys(args, plan.method), plan.options, true);
  let lock: Lock;
  try {
    lock = await engine.acquireRequest(request);
  } catch (error) {
    return whenBusy(plan, error, args);
  }
  const result = await holdWhile(
    lock,
    () => engine.runHolding(lock, request.fullKeys, invoke),
    onLostOf(plan, args),
  );
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
    /** Resolves with the release's refusal, if the store refused it for good. */
    const release = (): Promise<LockStoreRefusedError | undefined> => {
      const held = lock;
      lock = undefined;
      if (!held) return Promise.resolve(undefined);
      return held.release().then(
        () => undefined,
        (error: unknown) => (error instanceof LockStoreRefusedError ? error : undefined),
      );
    };
    // The lock is gone by the time the subscriber hears the end, as with a Promise result; a
    // release refused for good ends the stream with that refusal instead.
    const end = (notify: () => void): void =>
      void release().then((refused) => (refused ? subscriber.error(refused) : notify()));
    const run = (held: Lock, fullKeys: readonly string[]): void => {
      if (cancel.signal.aborted) return void held.release().catch(() => undefined);
      lock = held;
      held.signal.addEventListener('abort', () => {
        const lost = lossOf(held, undefined);
        if (subscriber.closed || (lost && plan.onLost === 'ignore')) return;
        inner?.unsubscribe();
        // Lost: as `onLost` says. Else shutdown: the stream ends, so its lock can be released.
        const reason: unknown = held.signal.reason;
        end(() => endStream(lost ? whenLost(plan, lost, args) : () => throwIt(reason), subscriber));
      });
      // Subscribing inside the lock's context makes nested locked calls in the stream reentrant.
      inner = engine.runHolding(held, fullKeys, () => subscribeTo(invoke(), subscriber, end));
    };
    try {
      const signals = [plan.options.signal, cancel.signal].filter((s): s is AbortSignal => !!s);
      const options = { ...plan.options, signal: AbortSignal.any(signals) };
      const request = engine.prepare(plan.resolveKeys(args, plan.method), options, true);
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
  endStream(() => whenBusy(plan, error, args), subscriber);
}

/** Ends a stream with what `fallback` gives: its error, or its value (or stream) instead. */
function endStream(fallback: () => unknown, subscriber: Subscriber<unknown>): void {
  let value: unknown;
  try {
    value = fallback();
  } catch (error) {
    return subscriber.error(error);
  }
  if (isObservable(value)) return void value.subscribe(subscriber);
  if (value !== undefined) subscriber.next(value);
  subscriber.complete();
}

function throwIt(error: unknown): never {
  throw error;
}

/** A stream's lock was lost: its error, or `onLost`'s value. */
function whenLost(plan: LockedMethodPlan, error: LockLostError, args: unknown[]): () => unknown {
  return () => {
    if (plan.onLost === 'throw') throw error;
    return (plan.onLost as Exclude<OnLostCall, 'throw' | 'ignore'>)(error, ...args);
  };
}

/** The plan's `onLost` for one call: a function gets the call's arguments too. */
function onLostOf(plan: LockedMethodPlan, args: unknown[]): OnLost {
  const { onLost } = plan;
  return typeof onLost === 'function' ? (error) => onLost(error, ...args) : onLost;
}

/**
 * A lock not taken: busy goes to `onBusy`. With `'skip'` (a scheduled job), an unreachable store
 * skips the run too: the module logs the outage once, where a scheduler would log every tick.
 */
function whenBusy(plan: LockedMethodPlan, error: unknown, args: unknown[]): unknown {
  if (plan.onBusy === 'skip' && error instanceof LockStoreError) return undefined;
  if (!(error instanceof LockBusyError) || plan.onBusy === 'throw') throw error;
  if (plan.onBusy === 'skip') return undefined;
  return plan.onBusy(error, ...args);
}
