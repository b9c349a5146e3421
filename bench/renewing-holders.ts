import Redlock from 'redlock';
import { Mutex } from 'redis-semaphore';
import { LockService } from '../dist/index.js';
import { connect, quit } from './contenders/connect.js';

/** Holds locks with each library's own auto-renewal, and counts those it loses. */
export interface RenewingHolder {
  readonly name: string;
  readonly settings: string;
  /** Takes the key and keeps it renewed; resolves with its release. */
  hold(key: string): Promise<() => Promise<void>>;
  /** Locks lost so far (renewal came too late or failed). */
  lost(): number;
  /** Releases that failed, which happens to a lock already lost. */
  releaseErrors(): number;
  close(): Promise<void>;
}

export const HOLD_TTL_MS = 3_000;

export async function libraryHolder(url: string): Promise<RenewingHolder> {
  const client = await connect(url);
  const service = new LockService({ redis: client });
  // Held locks only: a released one must not stay reachable, or it would count as heap held.
  const locks = new Set<{ signal: AbortSignal }>();
  return {
    name: 'library',
    settings: `acquire({ ttl: ${HOLD_TTL_MS} }), autoRenew (default): every ttl/3, batched`,
    async hold(key) {
      const lock = await service.acquire(key, { ttl: HOLD_TTL_MS, wait: 0 });
      locks.add(lock);
      return async () => {
        locks.delete(lock);
        // A lost lock's release reports 'expired' rather than throwing.
        await lock.release();
      };
    },
    lost: () => [...locks].filter((lock) => lock.signal.aborted).length,
    releaseErrors: () => 0,
    async close() {
      await service.onApplicationShutdown();
      await quit(client);
    },
  };
}

const REDLOCK_THRESHOLD_MS = 500;

export async function redlockHolder(url: string): Promise<RenewingHolder> {
  const client = await connect(url);
  const redlock = new Redlock([client], { retryCount: 0 });
  const signals = new Set<AbortSignal>();
  let releaseErrors = 0;
  return {
    name: 'redlock',
    settings: `using(ttl ${HOLD_TTL_MS}): extends each lock ${REDLOCK_THRESHOLD_MS} ms before it expires (default threshold)`,
    hold(key) {
      // `using` is redlock's only auto-extending form: the routine runs while the lock is held.
      return new Promise((resolveHold, rejectHold) => {
        let letGo!: () => void;
        const released = new Promise<void>((resolve) => (letGo = resolve));
        const done = redlock.using([key], HOLD_TTL_MS, async (signal) => {
          signals.add(signal);
          resolveHold(async () => {
            letGo();
            // `using` rethrows the failed release of a lock its extension already lost.
            await done.catch(() => releaseErrors++);
            signals.delete(signal);
          });
          await released;
        });
        done.catch(rejectHold);
      });
    },
    lost: () => [...signals].filter((signal) => signal.aborted).length,
    releaseErrors: () => releaseErrors,
    close: () => quit(client),
  };
}

export async function semaphoreHolder(url: string): Promise<RenewingHolder> {
  const client = await connect(url);
  let lost = 0;
  return {
    name: 'redis-semaphore',
    settings: `Mutex lockTimeout ${HOLD_TTL_MS}: one refresh timer per lock at 0.8 × lockTimeout (default)`,
    async hold(key) {
      // Its default onLockLost throws from a timer, which would crash the bench: count instead.
      const mutex = new Mutex(client, key, { lockTimeout: HOLD_TTL_MS, onLockLost: () => lost++ });
      await mutex.acquire();
      return () => mutex.release();
    },
    lost: () => lost,
    releaseErrors: () => 0,
    close: () => quit(client),
  };
}

export const HOLDERS = [libraryHolder, redlockHolder, semaphoreHolder];
