import type { ScenarioContext } from './context.js';
import { runCell, type ScenarioResult } from './results.js';
import { BULK_CONCURRENCY } from './scale-held-locks.js';
import { handOverAtScale } from './scale-hand-over.js';

const WAITER = [
  { name: 'library', settings: 'acquire(key, { ttl: 30000, wait: 120000 }) in the waiter' },
];

/** Many busy keys, each with a waiter in another process, released over a while, then at once. */
export async function runHandOverAtScale(context: ScenarioContext): Promise<ScenarioResult> {
  const { options, log } = context;
  const count = options.durations.handOverKeys;
  const spreadMs = options.durations.handOverSpreadMs;
  const cells = [];
  for (const spread of [spreadMs, 0]) {
    const title = spread
      ? `${count} keys released over ${spread / 1000} s`
      : `${count} keys released at once`;
    cells.push(
      await runCell(
        title,
        { keys: count, spreadMs: spread },
        WAITER,
        options.reps[8],
        async () => ({ figures: await handOverAtScale(context, spread) }),
        log,
      ),
    );
  }
  return {
    id: 8,
    title: `Hand-over of ${count.toLocaleString('en-US')} busy keys to another process`,
    cells,
    notes: [
      `One process holds every key; another waits for each (one acquire per key, all at once). The holder then releases them: each at its own time, evenly over the window (${count / (spreadMs / 1000)} per second), or all at once, ${BULK_CONCURRENCY} at a time. Hand-over: from the moment a key's release returned in the holder to the moment its waiter was granted it (both read as performance.timeOrigin + now() on the same machine); a waiter told before the release's own reply shows a negative figure. The releases begin 1.5 s after every waiter has subscribed, past their first fallback look. Waiter busy and CPU: the waiting process's event-loop utilisation and CPU time (all threads, per key) from just before the first release to the last grant. Commands per hand-over: every command the server ran meanwhile (commandstats, inside scripts included), over the keys. Subscriber connections: connections with a subscription (CLIENT LIST) while everyone waited.`,
    ],
  };
}
