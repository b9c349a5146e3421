/**
 * What the library's release costs Redis over raw's compare-and-delete, taken apart, with
 * nobody waiting: each cycle SETs a key and releases it with one script of the ladder below,
 * the scripts taking turns, so all of them see the same machine. Two medians per script: the
 * round-trip time, and Redis's own time per call (`usec_per_call` of EVALSHA in
 * `INFO commandstats`, over pipelined batches of one script at a time).
 * Run: `npm run build && node --import tsx bench/probes/release-script-rtt.ts`
 * (starts its own redis-server unless REDIS_URL is set).
 */
import { Redis } from 'ioredis';
import { turnsKeyOf } from '../../dist/stores/redis/key-slots.js';
import { RELEASE } from '../../dist/stores/redis/scripts/release.scripts.js';
import { openRedisTarget } from '../redis-target.js';
import { median } from '../stats.js';

const CYCLES = 20_000;
/** Rounds of Redis-time batches, and releases per batch. */
const ROUNDS = 31;
const BATCH = 3_000;
const OURS = "redis.call('GET', KEYS[1]) == ARGV[1]";
const CHANNEL = "string.sub(KEYS[2], 1, -7) .. ':released'";

/**
 * From raw's script to the library's, one ingredient at a time. The library's release publishes
 * only when the turn list names a waiter, so with nobody waiting it stops at the LPOP; the
 * PUBLISH rung shows what a release that always wakes the channel would pay on top.
 */
const LADDER = [
  {
    name: 'raw compare-and-delete',
    body: `if ${OURS} then return redis.call('DEL', KEYS[1]) end return 0`,
    oneKey: true,
  },
  {
    name: '+ turn list key',
    body: `if ${OURS} then return redis.call('DEL', KEYS[1]) end return 0`,
  },
  {
    name: '+ LPOP of the turn list',
    body: `if ${OURS} and not redis.call('LPOP', KEYS[2]) then return redis.call('DEL', KEYS[1]) end return 0`,
  },
  {
    name: '+ PUBLISH to nobody',
    body: `if ${OURS} and not redis.call('LPOP', KEYS[2]) then redis.call('DEL', KEYS[1]) return redis.call('PUBLISH', ${CHANNEL}, '') end return 0`,
  },
  { name: 'library RELEASE', body: RELEASE.PUBLISH.body },
];

const target = await openRedisTarget(() => undefined);
const client = new Redis(target.url);
const shas = await Promise.all(
  LADDER.map(({ body }) => client.script('LOAD', body) as Promise<string>),
);
const keysOf = (at: number, key: string): string[] =>
  LADDER[at].oneKey ? [key] : [key, turnsKeyOf(key)];

const spent = LADDER.map(() => [] as number[]);
for (let i = 0; i < CYCLES; i++) {
  for (let step = 0; step < LADDER.length; step++) {
    const at = (i + step) % LADDER.length;
    const keys = keysOf(at, `probe:${i}:${at}`);
    await client.set(keys[0], 'token', 'PX', 30_000);
    const sentAt = performance.now();
    await client.evalsha(shas[at], keys.length, ...keys, 'token');
    spent[at].push(performance.now() - sentAt);
  }
}

const serverTime = LADDER.map(() => [] as number[]);
for (let round = 0; round < ROUNDS; round++) {
  for (let step = 0; step < LADDER.length; step++) {
    const at = (round + step) % LADDER.length;
    await client.config('RESETSTAT');
    const batch = client.pipeline();
    for (let i = 0; i < BATCH; i++) {
      const keys = keysOf(at, `batch:${round}:${at}:${i}`);
      batch.set(keys[0], 'token', 'PX', 30_000);
      batch.evalsha(shas[at], keys.length, ...keys, 'token');
    }
    await batch.exec();
    const stats = await client.info('commandstats');
    serverTime[at].push(Number(/cmdstat_evalsha:.*usec_per_call=([\d.]+)/.exec(stats)![1]));
  }
}

const baseRtt = median(spent[0]) * 1000;
const baseServer = median(serverTime[0]);
console.log(`${'script'.padEnd(30)} ${'RTT µs'.padStart(16)} ${'Redis µs/call'.padStart(16)}`);
LADDER.forEach(({ name }, at) => {
  const rtt = median(spent[at]) * 1000;
  const server = median(serverTime[at]);
  const over = (value: number, base: number): string =>
    `${value.toFixed(1)} (+${(value - base).toFixed(1)})`.padStart(16);
  console.log(`${name.padEnd(30)} ${over(rtt, baseRtt)} ${over(server, baseServer)}`);
});
client.disconnect();
await target.close();
