/**
 * What the engine's parts cost per uncontended lock at C workers (`--c 8` by default), on real
 * Redis, built up from the Redis store: a bare lock (the library's key and option checks, a
 * token, the store's SET and release, a Set of held locks for shutdown), then that lock with
 * the library's own parts added one at a time (the request as the engine prepares it; the
 * `HeldLock` handle in the renewal watchdog; the store-call deadline), all of them at once,
 * and the library itself (`LockService`), against raw as in the bench.
 * Contenders take turns in blocks of 400 cycles per worker, in an order rotated every round,
 * so the machine's swings fall on all of them alike. Figures: the median over the rounds of
 * each block's speed against raw's block in the same round; Node's CPU per cycle (all
 * threads, `process.cpuUsage`) and the main thread's share of the wall time (`/proc`).
 * Run: `npm run build && node --import tsx bench/probes/engine-layers.ts [--c 8]`
 * (starts its own redis-server unless REDIS_URL is set; ROUNDS=80 by default).
 */
import type { Redis } from 'ioredis';
import { CallDeadlines } from '../../dist/core/call-deadlines.js';
import { HeldLock, type LeaseKeeper } from '../../dist/core/held-lock.js';
import { LeaseWatchdog } from '../../dist/core/lease-watchdog.js';
import { validateLockKeys } from '../../dist/core/lock-key.validation.js';
import {
  DEFAULT_LOCK_OPTIONS,
  lockOptionsProblem,
  resolveLockOptions,
} from '../../dist/core/lock-options.validation.js';
import { prepareLockRequest, type LockRequest } from '../../dist/core/lock-request.js';
import { newLockToken } from '../../dist/core/lock-token.js';
import { callStore } from '../../dist/core/store-call.js';
import { RedisLockStore } from '../../dist/stores/redis/redis-lock.store.js';
import { connect, quit } from '../contenders/connect.js';
import { createContender, type AcquireOptions, type Contender } from '../contenders/index.js';
import { openRedisTarget } from '../redis-target.js';
import { median } from '../stats.js';
import { mainThreadCpuMs } from './main-thread-cpu.js';
import { cycleBlock } from './uncontended-cycles.js';

const CALLERS = Number(process.argv[process.argv.indexOf('--c') + 1] || 8) || 8;
const ROUNDS = Number(process.env.ROUNDS ?? 80);
const BLOCK = 400;
const PREFIX = 'lock:';
/** The library's defaults, which are also the bench's ttl and wait for this scenario. */
const DEFAULTS = DEFAULT_LOCK_OPTIONS;

type Part = 'request' | 'watchdog' | 'deadline';
const LAYERS: [string, Part[]][] = [
  ['bare lock', []],
  ['+ engine request', ['request']],
  ['+ held lock in watchdog', ['watchdog']],
  ['+ store-call deadline', ['deadline']],
  ['bare + all three', ['request', 'watchdog', 'deadline']],
];

/** The bare lock, with the library's parts in `parts` standing in for its own. */
function layered(name: string, parts: Part[], store: RedisLockStore): Contender {
  const has = new Set(parts);
  const held = new Set<object>();
  const deadlines = new CallDeadlines(5_000);
  const watchdog = new LeaseWatchdog<HeldLock>({
    extend: () => Promise.resolve([]),
    renewed: () => undefined,
    lost: () => undefined,
    failed: () => undefined,
    drift: () => 0,
  });
  const keeper: LeaseKeeper = {
    releaseLease: () => Promise.resolve('released'),
    extendLease: () => Promise.resolve(),
  };
  const timed = <T>(operation: Promise<T>, key: string, what: 'acquire' | 'release'): Promise<T> =>
    has.has('deadline') ? callStore(operation, key, what, deadlines) : operation;
  const request = (key: string, options: AcquireOptions): LockRequest => {
    if (has.has('request')) return prepareLockRequest(key, options, PREFIX, DEFAULTS);
    const names = validateLockKeys(key);
    if (lockOptionsProblem(options)) throw new Error(`bad options for ${key}`);
    const resolved = resolveLockOptions(DEFAULTS, options);
    const fullKeys = [PREFIX + names[0]];
    return { names, label: names[0], fullKeys, options: resolved, startedAt: performance.now() };
  };
  return {
    name,
    settings: '',
    async acquire(key, options) {
      const lockRequest = request(key, { ttl: options.ttl, wait: options.wait });
      const { fullKeys: keys, options: resolved, startedAt } = lockRequest;
      const token = newLockToken();
      const lease = { keys, token, ttl: resolved.ttl, fencing: false };
      const attempt = await timed(store.tryAcquire(lease), key, 'acquire');
      if (!attempt.acquired) return undefined;
      const expiresAt = startedAt + resolved.ttl;
      const grant = { token, startedAt, expiresAt };
      const lock = has.has('watchdog')
        ? new HeldLock(keeper, undefined, lockRequest, grant)
        : { keys, token, expiresAt };
      if (lock instanceof HeldLock) watchdog.add(lock, startedAt);
      else held.add(lock);
      return {
        release: async () => {
          if (lock instanceof HeldLock) watchdog.delete(lock);
          else held.delete(lock);
          await timed(store.release(keys, token), key, 'release');
        },
      };
    },
    close: async () => {
      watchdog.stop();
      await store.close();
      await quit(store.client as Redis);
    },
  };
}

const target = await openRedisTarget(() => undefined);
const contenders: Contender[] = [await createContender('raw', target.url, 'defaults')];
for (const [name, parts] of LAYERS) {
  contenders.push(layered(name, parts, new RedisLockStore(await connect(target.url))));
}
contenders.push(await createContender('library', target.url, 'defaults'));

const blocks = contenders.map(() => ({ ms: [] as number[], cpuUs: 0, mainUs: 0, wallUs: 0 }));
for (let round = -3; round < ROUNDS; round++) {
  for (let step = 0; step < contenders.length; step++) {
    const at = (round + 3 + step) % contenders.length;
    const mainBefore = mainThreadCpuMs();
    const cpuBefore = process.cpuUsage();
    const startedAt = performance.now();
    await cycleBlock(contenders[at], CALLERS, BLOCK, 'layers');
    const ms = performance.now() - startedAt;
    const cpu = process.cpuUsage(cpuBefore);
    if (round < 0) continue;
    const block = blocks[at];
    block.ms.push(ms);
    block.cpuUs += cpu.user + cpu.system;
    block.mainUs += (mainThreadCpuMs() - mainBefore) * 1000;
    block.wallUs += ms * 1000;
  }
}

const cycles = ROUNDS * BLOCK * CALLERS;
console.log(`C = ${CALLERS}, ${ROUNDS} rounds of ${BLOCK} cycles per worker and contender`);
console.log(
  `${'contender'.padEnd(24)} ${'× raw'.padStart(6)} ${'Node µs/cycle'.padStart(14)} ${'main thread busy'.padStart(17)}`,
);
for (const [at, { name }] of contenders.entries()) {
  const { ms, cpuUs, mainUs, wallUs } = blocks[at];
  const ratio = median(ms.map((blockMs, round) => blocks[0].ms[round] / blockMs));
  const busy = `${((mainUs / wallUs) * 100).toFixed(0)}%`;
  console.log(
    `${name.padEnd(24)} ${ratio.toFixed(3).padStart(6)} ${(cpuUs / cycles).toFixed(1).padStart(14)} ${busy.padStart(17)}`,
  );
}
for (const contender of contenders) await contender.close();
await target.close();
