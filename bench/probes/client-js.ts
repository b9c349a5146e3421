/**
 * Client-side JavaScript per uncontended acquire + release, without the network: raw's logic,
 * this library (`LockService`) and redis-semaphore, each on an ioredis client whose commands
 * answer at once. Rounds alternate between them; medians of 7 rounds of 200 000 cycles.
 * Run: `npm run build && node --import tsx bench/probes/client-js.ts`
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Mutex } from 'redis-semaphore';
import { LockService } from '../../dist/index.js';

const CYCLES = 200_000;
const ROUNDS = 7;

/** An unconnected client whose commands resolve at once (SET: OK; a release: "released"). */
function instantClient(): Redis {
  const client = new Redis({ lazyConnect: true });
  Object.assign(client, {
    call: (command: string) => Promise.resolve(command === 'set' ? 'OK' : 2),
    set: () => Promise.resolve('OK'),
    evalsha: () => Promise.resolve(1),
    eval: () => Promise.resolve(1),
  });
  return client;
}

const rawClient = instantClient();
const semaphoreClient = instantClient();
const service = new LockService({ redis: instantClient() });
await service.onModuleInit();

const contenders: [string, (i: number) => Promise<void>][] = [
  [
    'raw',
    async (i) => {
      const token = randomBytes(16).toString('base64url');
      if ((await rawClient.set(`k:${i}`, token, 'PX', 30_000, 'NX')) !== 'OK') return;
      await rawClient.evalsha('sha', 1, `k:${i}`, token);
    },
  ],
  [
    'library',
    async (i) => {
      const lock = await service.acquire(`k:${i}`, { ttl: 30_000, wait: 10_000 });
      await lock.release();
    },
  ],
  [
    'redis-semaphore',
    async (i) => {
      const mutex = new Mutex(semaphoreClient, `k:${i}`, {
        lockTimeout: 30_000,
        acquireTimeout: 10_000,
      });
      if (await mutex.tryAcquire()) await mutex.release();
    },
  ],
];

const perCycle = contenders.map(() => [] as number[]);
for (let round = 0; round < ROUNDS; round++) {
  for (const [at, [, cycle]] of contenders.entries()) {
    const startedAt = performance.now();
    for (let i = 0; i < CYCLES; i++) await cycle(i);
    perCycle[at].push(((performance.now() - startedAt) / CYCLES) * 1000);
  }
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1];
for (const [at, [name]] of contenders.entries()) {
  console.log(`${name.padEnd(16)} ${median(perCycle[at]).toFixed(2)} µs per cycle`);
}
await service.onApplicationShutdown();
