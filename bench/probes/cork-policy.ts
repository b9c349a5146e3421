/**
 * Which corking rule serves uncontended locks best at C workers (`--c 8` by default): the
 * library (`LockService`) with its Redis store sending through each rule, against raw as in
 * the bench. Contenders take turns in runs of 300 ms, so the machine's swings fall on all of
 * them alike; medians over the rounds of each run's ratio to raw's run in the same round, with
 * Node's CPU per cycle (`process.cpuUsage`) and its share of the wall time.
 * Rules: `behind B, batch N` corks a command while B or more await replies, up to N commands
 * per write (`N = q/4` a quarter of the backlog, at least 3); `none` writes each at once.
 * Run: `npm run build && node --import tsx bench/probes/cork-policy.ts [--c 8]`
 * (starts its own redis-server unless REDIS_URL is set).
 */
import type { Redis } from 'ioredis';
import { LockService } from '../../dist/index.js';
import {
  corkBatch,
  corkingSender,
  directSender,
  type CommandSender,
} from '../../dist/stores/redis/command-sender.js';
import { connect, quit } from '../contenders/connect.js';
import { createContender, type Contender } from '../contenders/index.js';
import { openRedisTarget } from '../redis-target.js';
import { median } from '../stats.js';
import { cycleUncontended } from './uncontended-cycles.js';

const CALLERS = Number(process.argv[process.argv.indexOf('--c') + 1] || 8) || 8;
const RUN_MS = 300;
const ROUNDS = Number(process.env.ROUNDS ?? 30);

const RULES: [string, ((client: Redis) => CommandSender) | undefined][] = [
  ['library as built', undefined],
  ['behind 1, batch 5', (client) => corkingSender(client, { backlog: 1, batch: () => 5 })],
  ['behind 3, batch 3', (client) => corkingSender(client, { backlog: 3, batch: () => 3 })],
  ['behind 3, batch q/4', (client) => corkingSender(client, { backlog: 3, batch: corkBatch })],
  ['none', (client) => directSender(client)],
];

async function library(url: string, rule?: (client: Redis) => CommandSender): Promise<Contender> {
  const client = await connect(url);
  const service = new LockService({ redis: client });
  await service.onModuleInit();
  // The probe swaps the store's private sender; the store is otherwise as users get it.
  if (rule) (service.engine as unknown as StoreHolder).context.config.store.send = rule(client);
  return {
    name: 'library',
    settings: '',
    async acquire(key, { ttl, wait }) {
      const lock = await service.acquire(key, { ttl, wait });
      return { release: async () => void (await lock.release()) };
    },
    close: async () => {
      await service.onApplicationShutdown();
      await quit(client);
    },
  };
}

interface StoreHolder {
  context: { config: { store: { send: CommandSender } } };
}

const target = await openRedisTarget(() => undefined);
const names = ['raw', ...RULES.map(([name]) => name)];
const contenders = [await createContender('raw', target.url, 'defaults')];
for (const [, rule] of RULES) contenders.push(await library(target.url, rule));

const runs = contenders.map(() => [] as { rate: number; cpuUs: number; share: number }[]);
for (let round = -1; round < ROUNDS; round++) {
  for (let step = 0; step < contenders.length; step++) {
    const at = (round + 1 + step) % contenders.length;
    const cpuBefore = process.cpuUsage();
    const startedAt = performance.now();
    const cycles = await cycleUncontended(contenders[at], CALLERS, RUN_MS, 'cork');
    const ms = performance.now() - startedAt;
    const cpu = process.cpuUsage(cpuBefore);
    const cpuUs = cpu.user + cpu.system;
    if (round >= 0)
      runs[at].push({ rate: cycles / ms, cpuUs: cpuUs / cycles, share: cpuUs / 1000 / ms });
  }
}
console.log(`C = ${CALLERS}, ${ROUNDS} rounds of ${RUN_MS} ms per contender`);
console.log(
  `${'contender'.padEnd(22)} ${'× raw'.padStart(6)} ${'Node µs/cycle'.padStart(14)} ${'Node busy'.padStart(10)}`,
);
for (const [at, name] of names.entries()) {
  const ratio = median(runs[at].map((run, round) => run.rate / runs[0][round].rate));
  const cpu = median(runs[at].map((run) => run.cpuUs));
  const share = median(runs[at].map((run) => run.share));
  console.log(
    `${name.padEnd(22)} ${ratio.toFixed(3).padStart(6)} ${cpu.toFixed(1).padStart(14)} ${`${(share * 100).toFixed(0)}%`.padStart(10)}`,
  );
}
for (const contender of contenders) await contender.close();
await target.close();
