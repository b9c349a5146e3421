/**
 * What the engine costs per uncontended acquire + release, in client JavaScript alone: the
 * library (`LockService`) over a store whose replies come one macrotask later, as a socket's
 * would, against the two bare replies, and with single parts of the engine added to them.
 * Rounds alternate between the rows; medians of 15 rounds of 20,000 cycles.
 * Run: `npm run build && node --import tsx bench/probes/engine-overhead.ts`
 */
import { LockService, type LockStore } from '../../dist/index.js';
import { CallDeadlines } from '../../dist/core/call-deadlines.js';
import { callStore } from '../../dist/core/store-call.js';
import { median } from '../stats.js';

const CYCLES = 20_000;
const ROUNDS = 15;
const OPTIONS = { ttl: 30_000, wait: 10_000 };

const nextMacrotask = <T>(value: T): Promise<T> =>
  new Promise((resolve) => setImmediate(() => resolve(value)));
const WON = { acquired: true } as const;
const RELEASED = { result: 'released', waitersElsewhere: false } as const;
const echoStore: LockStore = {
  tryAcquire: () => nextMacrotask(WON),
  release: () => nextMacrotask(RELEASED),
  extend: (leases) => Promise.resolve(leases.map(() => 'extended' as const)),
  subscribe: () => Promise.resolve(() => undefined),
  ping: () => Promise.resolve(),
  close: () => Promise.resolve(),
};

const service = new LockService({ store: echoStore });
await service.onModuleInit();
const { engine } = service;
const deadlines = new CallDeadlines(5_000);

const rows: [string, (i: number) => Promise<unknown>][] = [
  [
    'two bare replies',
    async () => {
      await nextMacrotask(WON);
      await nextMacrotask(RELEASED);
    },
  ],
  [
    '+ store-call deadlines',
    async () => {
      await callStore(nextMacrotask(WON), 'k', 'acquire', deadlines);
      await callStore(nextMacrotask(RELEASED), 'k', 'release', deadlines);
    },
  ],
  [
    '+ request validation',
    async (i) => {
      engine.prepare(`k:${i}`, { ...OPTIONS });
      await nextMacrotask(WON);
      await nextMacrotask(RELEASED);
    },
  ],
  [
    'library',
    async (i) => {
      const lock = await service.acquire(`k:${i}`, { ...OPTIONS });
      await lock.release();
    },
  ],
];

const perCycle = rows.map(() => [] as number[]);
for (let round = -2; round < ROUNDS; round++) {
  for (let step = 0; step < rows.length; step++) {
    const at = (round + 2 + step) % rows.length;
    const startedAt = performance.now();
    for (let i = 0; i < CYCLES; i++) await rows[at][1](i);
    if (round >= 0) perCycle[at].push(((performance.now() - startedAt) / CYCLES) * 1000);
  }
}
const bare = median(perCycle[0]);
for (const [at, [name]] of rows.entries()) {
  const spent = median(perCycle[at]);
  console.log(
    `${name.padEnd(24)} ${spent.toFixed(2).padStart(6)} µs per cycle  (+${(spent - bare).toFixed(2)})`,
  );
}
await service.onApplicationShutdown();
