/**
 * A neighbour of the library on the same Redis: another app's process that sends one PING
 * every few ms and records each round trip, so that the time our commands hold the server shows
 * as its latency. The parent sends `start` ({ url, everyMs }), then `stop`, which answers with
 * the round trips' p50, p99 and max (ms); then `exit`.
 */
import { connect, quit } from './contenders/connect.js';
import { percentileOfSorted, sleep } from './stats.js';
import type { Message } from './worker-pool.js';

let running = false;
let loop: Promise<number[]> | undefined;
let client: Awaited<ReturnType<typeof connect>> | undefined;

async function pingLoop(everyMs: number): Promise<number[]> {
  const samples: number[] = [];
  while (running) {
    const start = performance.now();
    await client!.ping();
    samples.push(performance.now() - start);
    await sleep(everyMs);
  }
  return samples;
}

async function handle(message: Message): Promise<Message> {
  switch (message.type) {
    case 'start':
      client = await connect(String(message.url));
      running = true;
      loop = pingLoop(Number(message.everyMs));
      return { type: 'started' };
    case 'stop': {
      running = false;
      const samples = (await loop!).sort((a, b) => a - b);
      await quit(client!);
      return {
        type: 'pings',
        count: samples.length,
        p50: percentileOfSorted(samples, 50),
        p99: percentileOfSorted(samples, 99),
        max: samples[samples.length - 1] ?? NaN,
      };
    }
    case 'exit':
      process.exit(0);
  }
  throw new Error(`unknown message "${message.type}"`);
}

process.on('message', (message: Message) => {
  handle(message).then(
    (reply) => process.send!(reply),
    (error: Error) => process.send!({ type: 'error', message: error.stack ?? error.message }),
  );
});
process.on('disconnect', () => process.exit(0));
