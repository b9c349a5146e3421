/**
 * What the library's release costs Redis over raw's compare-and-delete, taken apart: each
 * cycle SETs a key and releases it with one script of the ladder below, the scripts taking
 * turns, so all of them see the same machine. Medians of round-trip time.
 * Run: `npm run build && node --import tsx bench/probes/release-script-rtt.ts`
 * (starts its own redis-server unless REDIS_URL is set).
 */
import { Redis } from 'ioredis';
import { turnsKeyOf } from '../../dist/stores/redis/key-slots.js';
import { RELEASE } from '../../dist/stores/redis/redis-lock.scripts.js';
import { openRedisTarget } from '../redis-target.js';

const CYCLES = 20_000;
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
const spent = LADDER.map(() => [] as number[]);
for (let i = 0; i < CYCLES; i++) {
  for (let step = 0; step < LADDER.length; step++) {
    const at = (i + step) % LADDER.length;
    const key = `probe:${i}:${at}`;
    const keys = LADDER[at].oneKey ? [key] : [key, turnsKeyOf(key)];
    await client.set(key, 'token', 'PX', 30_000);
    const sentAt = performance.now();
    await client.evalsha(shas[at], keys.length, ...keys, 'token');
    spent[at].push(performance.now() - sentAt);
  }
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1];
const base = median(spent[0]);
LADDER.forEach(({ name }, at) => {
  const rtt = median(spent[at]) * 1000;
  console.log(`${name.padEnd(30)} ${rtt.toFixed(1)} µs  (+${(rtt - base * 1000).toFixed(1)})`);
});
client.disconnect();
await target.close();
