import type { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { MAX_KEYS_PER_LOCK } from '../../lib/engine/request/lock-request.js';
import { turnsKeyOf } from '../../lib/stores/redis/redis-commands.js';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import {
  CALL_LOOKAHEAD,
  LINE_LOOKAHEAD,
  MAX_IN_LINE,
} from '../../lib/stores/redis/scripts/lua-helpers.js';
import { createTestEngine } from '../harness/test-engine.js';
import { useRedisServer } from '../harness/use-redis.js';
import { realtimeRedis } from './scheduling.js';
import { waitUntil } from '../harness/waits.js';
import { figure } from '../harness/figures.js';
import { libraryToken } from '../harness/library-tokens.js';
import { scriptsOver, slowScripts, watchSlowlog } from '../harness/slowlog.js';

// A multi-key lock's acquire and release are each one script that works through every key, its
// fence counter and its turn list, while Redis serves nobody else. MAX_KEYS_PER_LOCK keeps the
// largest lock allowed well under 2 ms a call, even with every turn list full (MAX_IN_LINE).
const SLOW_MICROS = 2_000;
/** Scripts shorter than this are not logged, and not timed: they are fast enough. */
const LOGGED_MICROS = 100;
const ROUNDS = 5;

const names = (count: number, at: string): string[] =>
  Array.from({ length: count }, (_, i) => `${at}:${i}`);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Fills each key's turn list with `count` listeners of other processes, as `join_line` writes them. */
async function fillLines(probe: Redis, keys: readonly string[], count: number): Promise<void> {
  const pipeline = probe.pipeline();
  const entries = Array.from({ length: count }, (_, i) => `*elsewhere-${i}`);
  for (const key of keys) {
    pipeline.del(turnsKeyOf(key)).rpush(turnsKeyOf(key), ...entries);
    pipeline.pexpire(turnsKeyOf(key), 60_000);
  }
  await pipeline.exec();
}

describe('the largest multi-key lock', () => {
  const redis = useRedisServer();
  // SLOWLOG then times the scripts, not Redis's waits for a CPU (see scheduling.ts).
  beforeAll(() => void realtimeRedis(redis.server.pid!));
  const engines: LockEngine[] = [];
  let store: RedisLockStore;
  beforeEach(async () => {
    await redis.probe.flushall();
    store = new RedisLockStore(redis.client);
  });
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((engine) => engine.close()));
    await store.close();
  });

  it('waits, takes its keys with fences and releases them, each call well under 2 ms', async () => {
    const holder = createTestEngine(redis.client);
    const waiter = createTestEngine(redis.connect());
    engines.push(holder, waiter);
    const keys = names(MAX_KEYS_PER_LOCK, 'order');
    const lastLine = turnsKeyOf(`lock:${keys.at(-1)}`);
    const label = `${MAX_KEYS_PER_LOCK} keys, fenced and listening`;

    /** The scripts of `ROUNDS` waits and hand-overs that ran over `SLOW_MICROS`. */
    async function slowRounds(): Promise<number[]> {
      await watchSlowlog(redis.probe, LOGGED_MICROS);
      for (let round = 0; round < ROUNDS; round++) {
        const held = await holder.acquire(keys);
        const waiting = waiter.acquire(keys, { fencing: true, wait: 10_000 });
        // The waiter listens on every key: in the turn list of each.
        await waitUntil('the waiter in line', async () => (await redis.probe.llen(lastLine)) === 1);
        expect(await held.release()).toBe('released');
        const lock = await waiting;
        expect(lock.fences).toHaveLength(MAX_KEYS_PER_LOCK);
        expect(await lock.release()).toBe('released');
      }
      return scriptsOver(redis.probe, SLOW_MICROS, label);
    }

    // A script too slow for the bound is slow in every run; one that met the VM descheduled by
    // its host (seen here at 2.4 ms, where the scripts take under 1 ms) is not: once more.
    const over = await slowRounds();
    expect(over.length === 0 ? over : await slowRounds()).toEqual([]);
  });

  /** Times (µs) of the scripts of a lock on `count` keys whose turn lists are all full. */
  async function withFullLines(count: number): Promise<Record<string, number[]>> {
    const keys = names(count, 'lock:full');
    // Tokens of the engine's form: a key taken while others wait holds its token marked.
    const [mine, other, late] = ['mine', 'other', 'late'].map(libraryToken);
    const take = (token: string, queue?: string) =>
      store.tryAcquire({ keys, token, ttl: 10_000, fencing: queue !== undefined, queue });
    const times: Record<string, number[]> = { take: [], release: [], wait: [] };
    const timed = async (what: string, run: () => Promise<unknown>): Promise<void> => {
      await watchSlowlog(redis.probe, LOGGED_MICROS);
      await run();
      times[what]!.push(...(await slowScripts(redis.probe)));
    };
    for (let round = 0; round < ROUNDS; round++) {
      await fillLines(redis.probe, keys, MAX_IN_LINE);
      // Free keys, fenced, for a listening queue: it is looked for in every list, to leave it.
      await timed('take', async () =>
        expect(await take(mine!, 'me')).toMatchObject({ acquired: true }),
      );
      // Every list starts with listeners: the release looks past some of them, and wakes all.
      await timed('release', async () =>
        expect((await store.release(keys, mine!)).result).toBe('released'),
      );
      const lookedAt = Math.min(LINE_LOOKAHEAD, Math.floor(CALL_LOOKAHEAD / count));
      expect(await redis.probe.llen(turnsKeyOf(keys[0]!))).toBe(MAX_IN_LINE - lookedAt);
      // Busy keys: the queue is looked for in every list, and joins each.
      await fillLines(redis.probe, keys, MAX_IN_LINE - 1);
      expect(await take(other!)).toEqual({ acquired: true });
      await timed('wait', async () =>
        expect(await take(mine!, 'me')).toMatchObject({ acquired: false }),
      );
      expect(await redis.probe.llen(turnsKeyOf(keys[0]!))).toBe(MAX_IN_LINE);
      // A full line takes nobody more: the next queue hears releases all the same, and polls.
      expect(await take(late!, 'latecomer')).toMatchObject({ acquired: false });
      expect(await redis.probe.llen(turnsKeyOf(keys[0]!))).toBe(MAX_IN_LINE);
      await store.release(keys, other!, { quiet: true });
    }
    return times;
  }

  it('stays well under 2 ms a call with every turn list full', async () => {
    const times = await withFullLines(MAX_KEYS_PER_LOCK);

    const medians = Object.entries(times).map(([what, micros]) => [what, median(micros)] as const);
    for (const [what, micros] of medians) {
      figure(`${MAX_KEYS_PER_LOCK} keys, full turn lists, ${what}: median µs`, micros);
    }
    expect(medians.filter(([, micros]) => micros >= SLOW_MICROS)).toEqual([]);
  });

  it('canary: eight times as many keys (past the store, unchecked) hold Redis for more than 2 ms', async () => {
    const times = await withFullLines(8 * MAX_KEYS_PER_LOCK);

    figure(`${8 * MAX_KEYS_PER_LOCK} keys, full turn lists, take: median µs`, median(times.take!));
    expect(median(times.take!)).toBeGreaterThan(SLOW_MICROS);
  });
});
