/**
 * A neighbour of the library on the same Redis: another app's process that sends one `TIME`
 * every few ms, on its own schedule. For each it records the round trip, and how long Redis kept it waiting: from
 * the moment it was sent to the server time in the reply (the same machine's clock). The wait
 * is what our commands cost others; the round trip adds this process's own scheduling, which on
 * a busy 2-core VM reaches several ms whatever Redis does. The parent sends `start` ({ url,
 * everyMs }), then `stop`, which answers with p50, p99 and max (ms) of both; then `exit`.
 */
import { connect, quit } from './contenders/connect.js';
import { percentileOfSorted } from './stats.js';
import { serveParent, type Message } from './worker-pool.js';

let timer: NodeJS.Timeout | undefined;
let sent: Promise<void>[] = [];
const trips: number[] = [];
const waits: number[] = [];
let client: Awaited<ReturnType<typeof connect>> | undefined;

/**
 * This machine's wall clock (the one Redis's TIME reads) in ms with a fraction. The offset of
 * the wall clock from the monotonic one is re-read at every send, because NTP slews it by up
 * to half a ms a second: `performance.timeOrigin`, fixed at start, drifted several ms from
 * TIME within a run. `Date.now()` counts whole ms, so the offset it gives is up to 1 ms short;
 * the largest of the last `OFFSET_WINDOW` readings is within a few µs of the true one.
 */
const OFFSET_WINDOW = 256;
const offsets: number[] = [];
function epochMs(): number {
  const now = performance.now();
  offsets.push(Date.now() - now);
  if (offsets.length > OFFSET_WINDOW) offsets.shift();
  return now + Math.max(...offsets);
}

/**
 * One TIME every `everyMs`, whether or not the last one was answered: a stall of Redis then
 * delays every request sent during it, as it would an app's, rather than the one request a
 * sender that waits for each answer would have had out (coordinated omission).
 */
function startSending(everyMs: number): void {
  timer = setInterval(() => {
    const sentAt = epochMs();
    const start = performance.now();
    sent.push(
      client!.time().then(([seconds, micros]) => {
        trips.push(performance.now() - start);
        waits.push(Number(seconds) * 1000 + Number(micros) / 1000 - sentAt);
      }),
    );
  }, everyMs);
}

function spread(values: number[], name: string): Record<string, number> {
  const sorted = values.sort((a, b) => a - b);
  return {
    [`${name}P50`]: percentileOfSorted(sorted, 50),
    [`${name}P99`]: percentileOfSorted(sorted, 99),
    [`${name}Max`]: sorted[sorted.length - 1] ?? NaN,
  };
}

async function handle(message: Message): Promise<Message> {
  switch (message.type) {
    case 'start':
      client = await connect(String(message.url));
      trips.length = 0;
      waits.length = 0;
      startSending(Number(message.everyMs));
      return { type: 'started' };
    case 'stop': {
      clearInterval(timer);
      await Promise.all(sent);
      sent = [];
      await quit(client!);
      return {
        type: 'pings',
        count: trips.length,
        ...spread(trips, 'trip'),
        ...spread(waits, 'wait'),
      };
    }
    case 'exit':
      process.exit(0);
  }
  throw new Error(`unknown message "${message.type}"`);
}

serveParent(handle);
