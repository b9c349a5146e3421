import { randomUUID } from 'node:crypto';
import { LockService, type Lock } from '../dist/index.js';
import { connect, quit } from './contenders/connect.js';
import { RELEASE, RELEASE_SHA } from './contenders/raw.js';

/** Takes many keys at once and gives them back: the library, or the raw floor beside it. */
export interface BulkLocker {
  readonly name: string;
  /** Takes `key` for `ttl` ms, or throws; resolves with its release. */
  take(key: string, ttl: number): Promise<() => Promise<void>>;
  /** Locks taken and not released whose lease is over (0 for raw, which cannot tell). */
  lost(): number;
  close(): Promise<void>;
}

/** The library's LockService, renewing every lock it holds (the default). */
export async function libraryLocker(url: string): Promise<BulkLocker> {
  const client = await connect(url);
  const service = new LockService({ redis: client });
  const held = new Set<Lock>();
  return {
    name: 'library',
    async take(key, ttl) {
      const lock = await service.acquire(key, { ttl, wait: 0 });
      held.add(lock);
      return async () => {
        held.delete(lock);
        await lock.release();
      };
    },
    lost: () => [...held].filter((lock) => !lock.isHeld).length,
    async close() {
      await service.onApplicationShutdown();
      await quit(client);
    },
  };
}

/** SET NX PX and compare-and-delete on one connection, with no renewal. */
export async function rawLocker(url: string): Promise<BulkLocker> {
  const client = await connect(url);
  await client.script('LOAD', RELEASE);
  return {
    name: 'raw',
    async take(key, ttl) {
      const token = randomUUID();
      if ((await client.set(key, token, 'PX', ttl, 'NX')) !== 'OK') throw new Error(`${key} busy`);
      return async () => void (await client.evalsha(RELEASE_SHA, 1, key, token));
    },
    lost: () => 0,
    close: () => quit(client),
  };
}

/** Runs `task(0 … count − 1)` with `concurrency` in flight; resolves with the elapsed ms. */
export async function runAll(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<void>,
): Promise<number> {
  const start = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return performance.now() - start;
}

/** Takes `count` keys named `prefix:i` at `concurrency`; resolves with their releases and the rate. */
export async function takeAll(
  locker: BulkLocker,
  prefix: string,
  count: number,
  ttl: number,
  concurrency: number,
): Promise<{ releases: (() => Promise<void>)[]; perSec: number }> {
  const releases: (() => Promise<void>)[] = new Array(count);
  const ms = await runAll(count, concurrency, async (i) => {
    releases[i] = await locker.take(`${prefix}:${i}`, ttl);
  });
  return { releases, perSec: (count / ms) * 1000 };
}

/** Runs every release at `concurrency`; resolves with the rate. */
export async function releaseAll(
  releases: readonly (() => Promise<void>)[],
  concurrency: number,
): Promise<number> {
  const ms = await runAll(releases.length, concurrency, (i) => releases[i]());
  return (releases.length / ms) * 1000;
}
