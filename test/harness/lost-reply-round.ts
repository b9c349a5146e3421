import type { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import type { Lock } from '../../lib/engine/lock.interface.js';
import { waitUntil } from './waits.js';
import { lockKeys } from './scan-keys.js';

/** How one call of a round ended, and how long it took to. */
export interface Settled {
  readonly name: string;
  readonly value?: unknown;
  readonly error?: unknown;
  readonly ms: number;
  /** withLock's work ran this many times. */
  readonly ran: number;
}

const TTL = 30_000;

/**
 * One round's calls, all in flight together on one connection: the first's reply is lost with
 * the connection, and so are those of every call still unanswered then (some reached Redis and
 * were applied, some never left). `held` are locks taken before the round, to extend and release.
 */
export function roundCalls(
  locks: LockEngine,
  at: string,
  held: { extend: Lock; release: Lock },
): Promise<Settled>[] {
  const calls: [string, (ran: () => void) => Promise<unknown>][] = [
    ['acquire', () => locks.acquire(`${at}:acquire`, { ttl: TTL, wait: 0 })],
    ['tryAcquire', () => locks.tryAcquire(`${at}:try`, { ttl: TTL })],
    ['fenced', () => locks.acquire(`${at}:fenced`, { ttl: TTL, wait: 0, fencing: true })],
    ['two keys', () => locks.acquire([`${at}:k1`, `${at}:k2`], { ttl: TTL, wait: 0 })],
    ['acquire, wait', () => locks.acquire(`${at}:wait`, { ttl: TTL, wait: 500 })],
    ['withLock', (ran) => locks.withLock(`${at}:with`, ran, { ttl: TTL, wait: 0 })],
    ['extend', () => held.extend.extend()],
    ['release', () => held.release.release()],
  ];
  return calls.map(async ([name, call]) => {
    let ran = 0;
    const startedAt = performance.now();
    try {
      const value = await call(() => void ran++);
      return { name, value, ms: performance.now() - startedAt, ran };
    } catch (error) {
      return { name, error, ms: performance.now() - startedAt, ran };
    }
  });
}

/** The locks a round's calls returned (withLock's is released by then). */
export function locksOf(results: readonly Settled[]): Lock[] {
  return results.flatMap(({ value }) =>
    value && typeof value === 'object' && 'token' in value ? [value as Lock] : [],
  );
}

/**
 * Every lock key not held by one of `owned` is an orphan: it must carry a lease, and go long
 * before that lease would end (the engine gives it back). Returns the slowest such wait, in ms.
 */
export async function orphansGone(
  probe: Redis,
  owned: readonly Lock[],
  withinMs: number,
): Promise<number> {
  const tokens = new Set(owned.filter((lock) => lock.isHeld).map((lock) => lock.token));
  const startedAt = performance.now();
  const orphans = async (): Promise<string[]> => {
    const keys = await lockKeys(probe);
    const values = keys.length ? await probe.mget(keys) : [];
    return keys.filter((_, i) => values[i] !== null && !tokens.has(values[i]!));
  };
  for (const key of await orphans()) {
    const pttl = await probe.pttl(key);
    // -2: given back already, between the scan and now.
    if (pttl !== -2 && !(pttl > 0)) throw new Error(`orphan ${key} has no lease (PTTL ${pttl})`);
  }
  await waitUntil(
    'every orphan lock key to be given back',
    async () => !(await orphans()).length,
    withinMs,
  );
  return performance.now() - startedAt;
}
