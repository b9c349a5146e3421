import { monitorEventLoopDelay } from 'node:perf_hooks';
import { runInThisContext } from 'node:vm';
import type { Redis } from 'ioredis';
import type { LockEngine } from '../../../lib/engine/lock-engine.js';
import type { LockEvent } from '../../../lib/engine/lock.events.js';

export { scanKeys } from '../../harness/scan-keys.js';

/**
 * The real `process`. Jest hands each test file a copy of it, and listeners added to the copy
 * never hear `unhandledRejection` or `uncaughtException`; `runInThisContext` evaluates in
 * Node's own context, where the real one lives.
 */
export const realProcess = runInThisContext('process') as NodeJS.Process;

/**
 * Watches this process's event-loop delay until `stop()`, which returns the worst delay in ms.
 * Time budgets add it, so a loaded machine that runs our timers late does not fail a test,
 * while a library that is late on an idle machine still does.
 */
export function loopLag(): { stop(): number } {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  return {
    stop: () => {
      histogram.disable();
      return histogram.max / 1e6;
    },
  };
}

/** Polls `check` until it returns something truthy; fails with `what` once `timeoutMs` has passed. */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 2_000,
): Promise<NonNullable<T>> {
  const deadline = performance.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await check();
    if (last) return last as NonNullable<T>;
    if (performance.now() > deadline) {
      throw new Error(
        `Timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Rejects if `promise` has not settled within `timeoutMs`, so a hang fails with a name. */
export function within<T>(what: string, promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not happen within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** Resolves with `performance.now()` at the moment `signal` aborts. */
export function abortTime(signal: AbortSignal): Promise<number> {
  if (signal.aborted) return Promise.resolve(performance.now());
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve(performance.now()), { once: true }),
  );
}

/** Settles `promise` into a value or the error it rejected with, plus when it settled. */
export async function outcome<T>(
  promise: Promise<T>,
): Promise<{ value?: T; error?: unknown; at: number }> {
  try {
    const value = await promise;
    return { value, at: performance.now() };
  } catch (error) {
    return { error, at: performance.now() };
  }
}

/** Calls per command so far, from `INFO commandstats` (includes NOSCRIPT-failed EVALSHAs). */
export async function commandCalls(client: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const match of (await client.info('commandstats')).matchAll(
    /^cmdstat_(\S+):calls=(\d+)/gm,
  )) {
    calls.set(match[1], Number(match[2]));
  }
  return calls;
}

/** Commands run between two `commandCalls` snapshots, leaving out the probes' own. */
export function callsBetween(
  before: Map<string, number>,
  after: Map<string, number>,
  ignore: readonly string[] = ['info', 'ping'],
): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [name, count] of after) {
    const ran = count - (before.get(name) ?? 0);
    if (ran > 0 && !ignore.includes(name)) delta[name] = ran;
  }
  return delta;
}

/** Pub/sub channels with at least one subscriber, server-wide. */
export function activeChannels(client: Redis): Promise<string[]> {
  return client.pubsub('CHANNELS') as Promise<string[]>;
}

/** Records every event of the engine until `stop()`. */
export function recordEvents(engine: LockEngine): { events: LockEvent[]; stop(): void } {
  const events: LockEvent[] = [];
  const subscription = engine.events$.subscribe((event) => events.push(event));
  return { events, stop: () => subscription.unsubscribe() };
}

/** The engine's private bookkeeping, read through a cast: all of it must drain to zero. */
export function engineInternals(engine: LockEngine): {
  queues: number;
  held: number;
  notifierChannels: number;
  notifierPending: number;
} {
  const inner = engine as unknown as {
    context: {
      store: {
        notifier?: { listeners: Map<unknown, unknown>; subscribing: Map<unknown, unknown> };
      };
    };
  };
  const notifier = inner.context.store.notifier;
  const { queues, held } = engine.stats();
  return {
    queues,
    held,
    notifierChannels: notifier?.listeners.size ?? 0,
    notifierPending: notifier?.subscribing.size ?? 0,
  };
}

/** What `engineInternals` reads once nothing is held, queued or subscribed. */
export const ENGINE_IDLE = Object.freeze({
  queues: 0,
  held: 0,
  notifierChannels: 0,
  notifierPending: 0,
});

/** True once the engine's bookkeeping has drained (see `ENGINE_IDLE`). */
export function engineIdle(engine: LockEngine): boolean {
  return Object.values(engineInternals(engine)).every((count) => count === 0);
}

export { figure } from '../../harness/figures.js';
