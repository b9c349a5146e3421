/** `T` without the falsy values `waitUntil` keeps polling past. */
export type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/**
 * Polls `check` until it returns a truthy value, and returns that value; fails with `what` once
 * `timeout` ms pass. For state the test cannot subscribe to (Redis keys, counters).
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
    if (performance.now() > deadline) throw new Error(`Timed out after ${timeout} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, every));
  }
}

/** Settles with the error `run` throws, synchronously or by rejecting; fails if it succeeds. */
export async function errorOf(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure, but the call succeeded');
}
