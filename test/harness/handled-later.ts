/**
 * Marks a promise the test awaits later as handled now, so that if the test fails before
 * awaiting it, its rejection (e.g. at close()) does not crash the run as an unhandled rejection.
 */
export function later<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}
