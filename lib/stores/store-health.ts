import { afterPendingIo } from './after-pending-io.js';
import type { LockStore, StoreHealth } from './lock-store.interface.js';

/** A call's answer and round trip in ms, or why it failed. */
export type Timed<T> =
  | { readonly ok: true; readonly value: T; readonly roundTripMs: number }
  | { readonly ok: false; readonly error: string };

/** The call's answer and round trip, or why it failed: never later than `timeout` ms. */
export function timed<T>(call: Promise<T>, timeout: number): Promise<Timed<T>> {
  const startedAt = performance.now();
  return new Promise((resolve) => {
    // The replies already read by then count: a slow event loop is not a slow store.
    const timer = setTimeout(
      () => afterPendingIo(() => resolve({ ok: false, error: `no answer within ${timeout} ms` })),
      timeout,
    );
    call.then(
      (value) => {
        clearTimeout(timer);
        const roundTripMs = Math.round((performance.now() - startedAt) * 100) / 100;
        resolve({ ok: true, value, roundTripMs });
      },
      (error: unknown) => {
        clearTimeout(timer);
        resolve({ ok: false, error: error instanceof Error ? error.message : String(error) });
      },
    );
  });
}

/** The health of a store that has no `health()`: up when its `ping` answers within `timeout`. */
export async function pingHealth(store: LockStore, timeout: number): Promise<StoreHealth> {
  const answer = await timed(store.ping(), timeout);
  return answer.ok
    ? { up: true, roundTripMs: answer.roundTripMs }
    : { up: false, error: answer.error };
}
