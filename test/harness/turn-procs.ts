import type { Redis } from 'ioredis';
import type { LockEngine, LockEngineConfig } from '../../lib/engine/lock-engine.js';
import type { LockEvent } from '../../lib/engine/lock.events.js';
import { ACQUIRE, ACQUIRE_IN_TURN } from '../../lib/stores/redis/scripts/acquire.scripts.js';
import {
  LEAVE,
  RELEASE,
  RELEASE_UNWATCHED,
} from '../../lib/stores/redis/scripts/release.scripts.js';
import { RedisLockStore } from '../../lib/stores/redis/redis-lock.store.js';
import { RecordingStore, type StoreRecord } from './recording-store.js';
import { scanKeys } from './scan-keys.js';
import { createTestEngine } from './test-engine.js';
import { useRedisServer, type RedisHarness } from './use-redis.js';
import { waitUntil } from './waits.js';

/** One engine on its own connection: a process of its own, as far as Redis can tell. */
export interface Proc {
  readonly engine: LockEngine;
  readonly store: RecordingStore;
  readonly client: Redis;
  /** The engine's `error` events. */
  readonly errors: LockEvent[];
}

export interface TurnProcs {
  /** One timeline of every process's store calls, emptied before each test. */
  readonly log: StoreRecord[];
  /** A new process; `muted` drops its release notifications. Closed after the test. */
  proc(name: string, overrides?: Partial<LockEngineConfig>, muted?: boolean): Proc;
  /**
   * Waits until no engine of `which` holds, waits or tries, then lets each of their connections
   * answer a PING, so every command they sent before (a leaveTurns is sent without waiting for
   * its answer) has run on the server.
   */
  settled(which?: readonly Proc[]): Promise<void>;
  /** Lock keys and turn lists in Redis (fence counters are meant to stay). */
  leftovers(): Promise<string[]>;
  /** Resolves with `p`'s queue id once an attempt of `p` in turn failed: it is in the turn list. */
  inLine(p: Proc): Promise<string>;
}

/**
 * A Redis server for the tests of a file, and processes on it (engines on connections of their
 * own, each through a RecordingStore sharing one log), closed before the server stops.
 */
export function useTurnProcsOnRedis(): TurnProcs & { redis: RedisHarness } {
  const redis = useRedisServer({ beforeStop: () => procs.closeAll() });
  const procs = useTurnProcs(redis);
  return { ...procs, redis };
}

/** The processes of `useTurnProcsOnRedis`: closed and the database emptied after each test. */
function useTurnProcs(redis: RedisHarness): TurnProcs & { closeAll(): Promise<void> } {
  let procs: Proc[] = [];
  const log: StoreRecord[] = [];

  const closeAll = async (): Promise<void> => {
    await Promise.all(procs.map((p) => p.engine.close()));
    procs = [];
  };

  beforeAll(async () => {
    // Every script call is then one EVALSHA: no NOSCRIPT fallback, which would count twice in
    // commandstats, and send a leave's script after a PING that `settled` relies on.
    const scripts = [
      ACQUIRE,
      ACQUIRE_IN_TURN,
      RELEASE.PUBLISH,
      RELEASE_UNWATCHED.PUBLISH,
      LEAVE.PUBLISH,
    ];
    for (const script of scripts) {
      await redis.probe.script('LOAD', script.body);
    }
  });

  beforeEach(() => {
    log.length = 0;
  });

  afterEach(async () => {
    await closeAll();
    await redis.probe.flushall();
  });

  return {
    log,
    closeAll,
    proc(name, overrides = {}, muted = false) {
      const client = redis.connect();
      const store = new RecordingStore(new RedisLockStore(client), name, log);
      store.muted = muted;
      const engine = createTestEngine(client, { store, ...overrides });
      const errors: LockEvent[] = [];
      engine.events$.subscribe((event) => event.type === 'error' && errors.push(event));
      const created = { engine, store, client, errors };
      procs.push(created);
      return created;
    },
    async settled(which = procs) {
      await waitUntil('engines settled', () =>
        which.every(({ engine }) => engine.stats().queues === 0 && engine.stats().held === 0),
      );
      await Promise.all(which.map((p) => p.client.ping()));
    },
    async leftovers() {
      const keys = await scanKeys(redis.probe);
      return keys.filter((key) => key.startsWith('lock:') || key.endsWith('\x1fturns'));
    },
    inLine(p) {
      return waitUntil(
        `${p.store.name} in line`,
        () => p.store.records('attempt').find((r) => r.queue !== undefined && !r.acquired)?.queue,
      );
    },
  };
}
