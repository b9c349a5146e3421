import { tracingChannel } from 'node:diagnostics_channel';
import {
  LockError,
  type LockLossReason,
  type LockStoreRefusedError,
} from '../errors/lock.errors.js';
import type { ExtendResult, LockKind, ReleaseResult } from '../stores/lock-store.interface.js';
import type { Lock } from './lock.interface.js';

/*
 * The engine's events (`events$`) and its `node:diagnostics_channel` tracing: the words every
 * layer shares to tell what happened.
 */

interface EventBase {
  /** The lock key as the caller named it (without the module's prefix). */
  readonly key: string;
}

/** Every state change of every lock, on one stream: build logging, metrics and tracing on it. */
export type LockEvent =
  | (EventBase & {
      readonly type: 'acquired';
      /** ms from the call to the lock being held. */
      readonly waited: number;
      readonly fence?: number;
    })
  | (EventBase & {
      readonly type: 'contended';
      /** Holder's remaining lease, ms (-1: none). */ readonly pttl: number;
    })
  | (EventBase & { readonly type: 'busy'; readonly waited: number })
  | (EventBase & {
      readonly type: 'released';
      /** ms held, counted from when the winning attempt was sent (the lease's start). */
      readonly held: number;
      readonly result: ReleaseResult;
    })
  | (EventBase & { readonly type: 'renewed'; readonly ttl: number })
  | (EventBase & { readonly type: 'expired'; readonly held: number })
  | (EventBase & { readonly type: 'lost'; readonly held: number; readonly reason: LockLossReason })
  | {
      readonly type: 'error';
      /** Undefined for a batched renewal, which covers many keys. */
      readonly key: string | undefined;
      readonly operation: StoreOperation;
      readonly error: Error;
    }
  | {
      /** Shutdown waits for the holders of these keys to release them, `timeout` ms at most. */
      readonly type: 'shutdown-waiting';
      readonly key?: undefined;
      readonly keys: readonly string[];
      /** ms: `shutdownTimeout`. */
      readonly timeout: number;
    }
  | StoreEvent;

/**
 * The store's state, as an operator wants to hear it: once when it stops answering (or does not
 * answer at startup), once when it is back, once per kind of refusal, and a risky or unverified
 * setting found at startup.
 */
export type StoreEvent =
  | {
      readonly type: 'store-down';
      readonly key?: undefined;
      /** Where the store is (no credentials), when the store can say. */
      readonly endpoint?: string;
      readonly error: Error;
      /** The store did not answer the startup check. */
      readonly atStartup: boolean;
    }
  | {
      readonly type: 'store-up';
      readonly key?: undefined;
      readonly endpoint?: string;
      /** ms from the first failure to the first answer since. */
      readonly downFor: number;
    }
  | {
      readonly type: 'unsafe-eviction';
      readonly key?: undefined;
      readonly endpoint?: string;
      /** Redis `maxmemory-policy`: any but `noeviction` may evict a held lock's key. */
      readonly policy: string;
    }
  | {
      /** The startup check could not read the eviction policy (CONFIG and INFO refused). */
      readonly type: 'eviction-unverified';
      readonly key?: undefined;
      readonly endpoint?: string;
      /** What the store answered instead. */
      readonly reason: string;
    }
  | {
      /**
       * The store refused a call in a way retrying cannot fix (an ACL without a command, key or
       * channel; a foreign value at a lock key; a read-only replica): once per kind of refusal.
       */
      readonly type: 'store-refused';
      readonly key?: undefined;
      readonly endpoint?: string;
      /** The first refused call of its kind; its message says what to grant or fix. */
      readonly error: LockStoreRefusedError;
      /** What the refused call did: a refused `ping` (health, startup) leaves the locks working. */
      readonly operation: StoreOperation;
    };

/** What a store call does, as the `error` and `store-refused` events name it. */
export type StoreOperation = 'acquire' | 'release' | 'extend' | 'subscribe' | 'ping';

export type LockEventType = LockEvent['type'];

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

/**
 * The tracing channels. Callers check `hasSubscribers` first: with no subscriber, nothing is
 * traced or allocated.
 */
export const tracing = { acquires, releases, extends: extends_ };

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
