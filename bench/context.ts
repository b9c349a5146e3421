import {
  CLIENTS_OF,
  LOCK_CONTENDERS,
  closeAll,
  createLockContenders,
  type BenchClient,
  type Contender,
  type LockContenderName,
  type Tuning,
} from './contenders/index.js';
import { runHotKeyLoop } from './hot-key-loop.js';
import type { BenchOptions } from './options.js';
import type { RedisTarget } from './redis-target.js';

export interface ScenarioContext {
  readonly target: RedisTarget;
  readonly options: BenchOptions;
  readonly log: (line: string) => void;
}

/**
 * Loads scripts (the first EVALSHA of each is a NOSCRIPT round trip), opens lazy connections
 * (the library's subscriber) and gives the JIT time to optimise each contender's hot path:
 * without it the first contender measured pays for its cold code.
 */
export async function warmUp(contender: Contender, ms: number): Promise<void> {
  // Contended first, so the measured runs start right after uncontended traffic.
  await runHotKeyLoop(contender, {
    key: `warm:${contender.name}:hot`,
    workers: 4,
    csMs: 0,
    durationMs: 150,
    ttl: 10_000,
  });
  const deadline = performance.now() + ms;
  const cycle = async (worker: number): Promise<void> => {
    for (let n = 0; performance.now() < deadline; n++) {
      const key = `warm:${contender.name}:${worker}:${n}`;
      const held = await contender.acquire(key, { ttl: 10_000, wait: 10_000 });
      await held?.release();
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, worker) => cycle(worker)));
}

/**
 * The lock contenders the run takes (`--contender`) that run on `client`, plus those of `keep`
 * that do (scenario 1's baseline), in the canonical order.
 */
export function contendersOn(
  client: BenchClient,
  options: BenchOptions,
  keep: readonly LockContenderName[] = [],
): LockContenderName[] {
  return LOCK_CONTENDERS.filter(
    (name) =>
      CLIENTS_OF[name].includes(client) &&
      (options.contenders.includes(name) || keep.includes(name)),
  );
}

/**
 * Connects the run's lock contenders on `client` with `tuning` (`contendersOn`), warms each up,
 * runs `use`, and closes them all.
 */
export async function withWarmContenders<T>(
  context: ScenarioContext,
  tuning: Tuning,
  use: (contenders: Contender[]) => Promise<T>,
  client: BenchClient = 'ioredis',
  keep: readonly LockContenderName[] = [],
): Promise<T> {
  const names = contendersOn(client, context.options, keep);
  const contenders = await createLockContenders(names, context.target.url, tuning, client);
  try {
    for (const contender of contenders) await warmUp(contender, context.options.durations.warmUpMs);
    return await use(contenders);
  } finally {
    await closeAll(contenders);
  }
}

/** A key no earlier run used, so leftovers of one run never meet the next. */
let serial = 0;
export function freshKey(prefix: string): string {
  return `${prefix}:${process.pid}:${++serial}`;
}
