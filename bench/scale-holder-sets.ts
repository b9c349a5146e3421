import { LockService, type Lock } from '../dist/index.js';
import { connect, quit } from './contenders/connect.js';
import type { ScenarioContext } from './context.js';
import { COMMAND_BUDGET_US } from './scale-held-locks.js';
import { openSlowLog } from './slow-log.js';

const SEMAPHORE_LIMIT = 1_000;
const SEMAPHORE_HOLDERS = 5_000;
const READERS = 1_000;
/** Each churning holder keeps its place this long before giving it back. */
const HOLD_MS = 1;

/**
 * Large holder sets: a semaphore of limit 1,000 that 5,000 holders take and give back in turn,
 * then 1,000 readers on one read-write key doing the same. Each for `holderSetMs`; measured:
 * the slowest command, the throughput, and the Redis memory per holder and per reader.
 */
export async function holderSetsAtScale(context: ScenarioContext) {
  const { target, options } = context;
  await target.admin.flushall();
  const clients = await Promise.all([connect(target.url), connect(target.url)]);
  // Two processes' worth of holders would be more faithful; two services on two connections
  // keep every holder in this process, where the figures are read.
  const services = clients.map((redis) => new LockService({ redis }));
  try {
    const semaphore = await churn(context, services, SEMAPHORE_HOLDERS, 'sem', {
      limit: SEMAPHORE_LIMIT,
    });
    const readers = await churn(context, services, READERS, 'rw', { mode: 'read' });
    return {
      semaphorePerSec: semaphore.perSec,
      semaphoreSlowestUs: semaphore.slowestUs,
      semaphoreOver2ms: semaphore.over,
      semaphoreStealMs: semaphore.stealMs,
      redisPerHolderB: semaphore.bytesPerHolder,
      readsPerSec: readers.perSec,
      readersSlowestUs: readers.slowestUs,
      readersOver2ms: readers.over,
      readersStealMs: readers.stealMs,
      redisPerReaderB: readers.bytesPerHolder,
    };
  } finally {
    await Promise.all(services.map((service) => service.onApplicationShutdown()));
    await Promise.all(clients.map(quit));
  }

  async function churn(
    context: ScenarioContext,
    services: readonly LockService[],
    holders: number,
    key: string,
    kind: { limit: number } | { mode: 'read' },
  ) {
    const closeSlowLog = await openSlowLog(context.target.admin, COMMAND_BUDGET_US);
    const deadline = performance.now() + options.durations.holderSetMs;
    let taken = 0;
    const holder = async (n: number): Promise<void> => {
      const service = services[n % services.length];
      while (performance.now() < deadline) {
        const lock = await service.acquire(key, { ...kind, ttl: 10_000, wait: 30_000 });
        taken++;
        await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
        await lock.release();
      }
    };
    const start = performance.now();
    await Promise.all(Array.from({ length: holders }, (_, n) => holder(n)));
    const seconds = (performance.now() - start) / 1000;
    const slow = await closeSlowLog();
    context.log(`  slowest command of ${key}: ${slow.slowest}, ${slow.slowestUs} µs`);
    const bytesPerHolder = await memoryPerMember(context, services[0], `${key}:full`, kind);
    return { ...slow, perSec: taken / seconds, bytesPerHolder };
  }
}

/**
 * The Redis bytes of one holder: MEMORY USAGE of a holder set with 1,000 holders, over 1,000.
 */
async function memoryPerMember(
  { target }: ScenarioContext,
  service: LockService,
  key: string,
  kind: { limit: number } | { mode: 'read' },
): Promise<number> {
  const locks: Lock[] = [];
  for (let n = 0; n < SEMAPHORE_LIMIT; n++) {
    locks.push(await service.acquire(key, { ...kind, ttl: 10_000, wait: 0 }));
  }
  const bytes = await target.admin.memory('USAGE', `lock:${key}`, 'SAMPLES', '0');
  await Promise.all(locks.map((lock) => lock.release()));
  return Number(bytes) / locks.length;
}
