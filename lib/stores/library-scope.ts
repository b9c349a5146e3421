import { AsyncResource } from 'node:async_hooks';

/**
 * The library's own async scope, made when this module loads, outside any caller's context.
 * Timers and connections that serve many locks are made in it, so that what they call back
 * (renewals, losses and the abort handlers they trigger, `events$` subscribers, wake-ups) never
 * runs in the async context of whichever caller happened to arm them: that caller's held locks
 * would look reentrant to unrelated code, and its own AsyncLocalStorage would leak there too.
 */
const scope = new AsyncResource('nestjs-distributed-lock');

/** Runs `fn` in the library's scope: what it schedules runs there too. */
export function inLibraryScope<T>(fn: () => T): T {
  return scope.runInAsyncScope(fn);
}
