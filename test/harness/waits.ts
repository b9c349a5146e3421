/** `T` without the falsy values `waitUntil` keeps polling past. */
export type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/** Resolves after `ms`. Only for pacing a workload or a fault, never to wait for a condition. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Polls `check` until it returns a truthy value, and returns that value; fails with `what` (and
 * the last value seen) once `timeout` ms pass. For state the test cannot subscribe to (Redis
 * keys, counters); an event the code emits is better awaited with `nextEvent`.
 */
export async function waitUntil<T>(
  what: string,
  check: () => T | Promise<T>,
  timeout = 5_000,
  every = 10,
): Promise<Truthy<T>> {
  const deadline = performance.now() + timeout;
  for (;;) {
    const value = await check();
    if (value) return value as Truthy<T>;
    if (performance.now() > deadline) {
      throw new Error(`Timed out after ${timeout} ms: ${what} (last: ${String(value)})`);
    }
    await sleep(every);
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

/** How a call settled: its value or the error it threw (only one is set), and `performance.now()` then. */
export interface Outcome<T> {
  readonly value?: T;
  readonly error?: unknown;
  readonly at: number;
}

/**
 * Settles a promise, or a call that may throw synchronously or reject, into an `Outcome`: the
 * one way tests catch a failure to look at it.
 */
export async function outcome<T>(run: Promise<T> | (() => T | Promise<T>)): Promise<Outcome<T>> {
  try {
    const value = await (typeof run === 'function' ? run() : run);
    return { value, at: performance.now() };
  } catch (error) {
    return { error, at: performance.now() };
  }
}

/** The error of `outcome(run)`; fails if the call succeeded. */
export async function errorOf(run: () => unknown): Promise<unknown> {
  const settled = await outcome(run);
  if ('error' in settled) return settled.error;
  throw new Error('expected a failure, but the call succeeded');
}
