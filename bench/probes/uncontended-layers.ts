/**
 * Where the time of an uncontended lock goes at C = 1 (or `--c N`), layer by layer, on real Redis: the
 * library (`LockService`), its Redis store alone (the same commands, no engine), redis-semaphore,
 * raw as in the bench (a `randomUUID` token), and raw with a `randomBytes(16)` token. The
 * contenders take turns in blocks of 300 cycles, so the machine's swings fall on all of them
 * alike; medians over 150 rounds of the per-block ratio to raw.
 * Run: `npm run build && node --import tsx bench/probes/uncontended-layers.ts`
 * (starts its own redis-server unless REDIS_URL is set).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RedisLockStore } from '../../dist/stores/redis/redis-lock.store.js';
import { newLockToken } from '../../dist/core/lock-token.js';
import { connect, quit } from '../contenders/connect.js';
import { createContender, type Contender } from '../contenders/index.js';
import { openRedisTarget } from '../redis-target.js';
import { median } from '../stats.js';

/** Concurrent callers: `--c 8` (default 1). */
const CALLERS = Number(process.argv[process.argv.indexOf('--c') + 1] || 1) || 1;
const BLOCK = 300;
const ROUNDS = Number(process.env.ROUNDS ?? 150);
const TTL = 30_000;
const COMPARE_AND_DELETE =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

function storeAlone(client: Redis): Contender {
  const store = new RedisLockStore(client);
  return {
    name: 'store alone',
    settings: '',
    async acquire(key) {
      const keys = [key];
      const token = newLockToken();
      const attempt = await store.tryAcquire({ keys, token, ttl: TTL, fencing: false });
      return attempt.acquired
        ? { release: async () => void (await store.release(keys, token)) }
        : undefined;
    },
    close: () => store.close(),
  };
}

function rawWithRandomBytes(client: Redis): Contender {
  const sha = createHash('sha1').update(COMPARE_AND_DELETE).digest('hex');
  return {
    name: 'raw, randomBytes',
    settings: '',
    async acquire(key) {
      const token = randomBytes(16).toString('base64url');
      if ((await client.set(key, token, 'PX', TTL, 'NX')) !== 'OK') return undefined;
      return { release: async () => void (await client.evalsha(sha, 1, key, token)) };
    },
    close: () => Promise.resolve(),
  };
}

const target = await openRedisTarget(() => undefined);
const storeClient = await connect(target.url);
const rawClient = await connect(target.url);
await rawClient.script('LOAD', COMPARE_AND_DELETE);
const contenders = [
  await createContender('library', target.url, 'defaults'),
  storeAlone(storeClient),
  await createContender('redis-semaphore', target.url, 'defaults'),
  await createContender('raw', target.url, 'defaults'),
  rawWithRandomBytes(rawClient),
];
const rawAt = 3;

const blockMs = contenders.map(() => [] as number[]);
let serial = 0;
for (let round = -5; round < ROUNDS; round++) {
  for (let step = 0; step < contenders.length; step++) {
    const at = (round + 5 + step) % contenders.length;
    const contender = contenders[at];
    const startedAt = performance.now();
    const caller = async (): Promise<void> => {
      for (let i = 0; i < BLOCK; i++) {
        const held = await contender.acquire(`layers:${serial++}`, { ttl: TTL, wait: 10_000 });
        await held!.release();
      }
    };
    await Promise.all(Array.from({ length: CALLERS }, caller));
    if (round >= 0) blockMs[at].push(performance.now() - startedAt);
  }
}
console.log(`C = ${CALLERS}`);
console.log(`${'contender'.padEnd(18)} ${'µs per cycle'.padStart(12)} ${'× raw'.padStart(7)}`);
for (const [at, { name }] of contenders.entries()) {
  const ratio = median(blockMs[at].map((ms, round) => blockMs[rawAt][round] / ms));
  const cycle = (median(blockMs[at]) / (BLOCK * CALLERS)) * 1000;
  console.log(
    `${name.padEnd(18)} ${cycle.toFixed(1).padStart(12)} ${ratio.toFixed(3).padStart(7)}`,
  );
}
for (const contender of contenders) await contender.close();
await quit(storeClient);
await quit(rawClient);
await target.close();
