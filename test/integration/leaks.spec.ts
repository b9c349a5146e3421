import { getEventListeners, setMaxListeners } from 'node:events';
import type { Redis } from 'ioredis';
import type { LockEngine } from '../../lib/engine/lock-engine.js';
import { LockBusyError, LockStoreError } from '../../lib/errors/lock.errors.js';
import { recordDuplicates } from '../harness/client-duplicates.js';
import { createTestEngine } from '../harness/test-engine.js';
import { useRedisServer } from '../harness/use-redis.js';
import { ENGINE_IDLE, engineIdle, engineState } from '../harness/engine-state.js';
import { activeChannels } from '../harness/command-stats.js';
import { figure } from '../harness/figures.js';
import { scanKeys } from '../harness/scan-keys.js';
import { waitUntil } from '../harness/waits.js';

const CYCLES = 10_000;
const LANES = 20;

/** Listener count per event name, for an emitter that must not accumulate listeners. */
function listenerCounts(emitter: NodeJS.EventEmitter | undefined): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of emitter?.eventNames() ?? [])
    counts[String(name)] = emitter!.listenerCount(name);
  return counts;
}

function countBy(items: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[item] = (counts[item] ?? 0) + 1;
  return counts;
}

describe('resource leaks', () => {
  // One engine for the whole file, closed before the connections it runs on.
  let engine: LockEngine;
  const redis = useRedisServer({ beforeStop: () => engine?.close() });

  // The connections the store opens from `redis.client`: the release notifier's subscriber.
  let opened: readonly Redis[] = [];

  beforeAll(() => {
    opened = recordDuplicates(redis.client);
    engine = createTestEngine(redis.client, { pollCap: 50 });
  });

  it(`returns to baseline after ${CYCLES} acquire/release cycles, failures included`, async () => {
    // A signal that lives across every call, as a request-scoped one would: each waiter must
    // remove the 'abort' listener it adds.
    const longLived = new AbortController().signal;
    // Every lane may be waiting on it at once; more than that would be a leak, which the
    // listener count below catches.
    setMaxListeners(LANES, longLived);
    const abortWhenContended = new Map<string, () => void>();
    const contention = engine.events$.subscribe((event) => {
      if (event.type !== 'contended') return;
      const abort = abortWhenContended.get(event.key);
      abortWhenContended.delete(event.key);
      // A microtask later the waiter is queued with its listener in place: a mid-wait abort.
      if (abort) queueMicrotask(abort);
    });
    // Each lane has a key nobody ever frees, held outside the engine as another process would.
    for (let lane = 0; lane < LANES; lane++) {
      await redis.probe.set(`lock:busy:${lane}`, 'other-process', 'PX', 60_000);
    }

    const WARM_UP = 10;
    const tally = { acquired: 0, busy: 0, aborted: 0, storeSilent: 0 };
    const expectReason = (reason: unknown) => (error: unknown) => {
      if (error !== reason) throw error;
      tally.aborted++;
    };
    const expectBusy = (error: unknown): void => {
      if (!(error instanceof LockBusyError)) throw error;
      tally.busy++;
    };
    // A 3 ms wait on a loaded machine may see the store stay silent for over 100 ms; the engine
    // then says so rather than "busy". Either way nothing may be left behind.
    const expectBusyOrSilence = (error: unknown): void => {
      if (error instanceof LockStoreError && /has not answered/.test(error.message)) {
        tally.storeSilent++;
      } else {
        expectBusy(error);
      }
    };

    async function cycle(lane: number, i: number): Promise<void> {
      const busyKey = `busy:${lane}`;
      switch (i % 10) {
        case 6: {
          if ((await engine.tryAcquire(busyKey)) !== undefined) throw new Error('took a busy key');
          return engine.acquire(busyKey, { wait: 0 }).then(() => undefined, expectBusy);
        }
        case 7:
          return engine
            .acquire(busyKey, { wait: 3, signal: longLived })
            .then(() => undefined, expectBusyOrSilence);
        case 8: {
          const controller = new AbortController();
          controller.abort(new Error('pre-aborted'));
          const reason = controller.signal.reason as unknown;
          return engine
            .acquire(`free:${lane}`, { signal: controller.signal })
            .then(() => undefined, expectReason(reason));
        }
        case 9: {
          const controller = new AbortController();
          const reason = new Error('aborted mid-wait');
          abortWhenContended.set(busyKey, () => controller.abort(reason));
          return engine
            .acquire(busyKey, { wait: 10_000, signal: controller.signal })
            .then(() => undefined, expectReason(reason));
        }
        default: {
          const lock = await engine.acquire(`free:${lane}`, { signal: longLived });
          tally.acquired++;
          if ((await lock.release()) !== 'released') throw new Error('release failed');
        }
      }
    }

    const runLanes = (cyclesPerLane: number): Promise<unknown> =>
      Promise.all(
        Array.from({ length: LANES }, async (_, lane) => {
          for (let i = 0; i < cyclesPerLane; i++) await cycle(lane, i);
        }),
      );

    const settled = (): Promise<boolean> => engineIdle(engine, redis.probe);

    const snapshot = async (): Promise<unknown> => {
      const [subscriber] = opened;
      return {
        resources: countBy(process.getActiveResourcesInfo()),
        client: listenerCounts(redis.client),
        clientSocket: listenerCounts(redis.client.stream),
        subscriber: listenerCounts(subscriber),
        subscriberSocket: listenerCounts(subscriber?.stream),
        signalListeners: getEventListeners(longLived, 'abort').length,
        redisClients: ((await redis.probe.client('LIST')) as string).trim().split('\n').length,
      };
    };

    // Warm up, so connections and listeners made once per engine are in the baseline.
    await runLanes(WARM_UP);
    await waitUntil('the engine to settle after warm-up', settled);
    const baseline = await snapshot();
    // The warm-up's waits made the store open its one subscriber connection.
    expect(opened).toHaveLength(1);

    const startedAt = performance.now();
    await runLanes(CYCLES / LANES);
    const elapsed = performance.now() - startedAt;
    await waitUntil('the engine to settle', settled, 5_000);
    const after = await waitUntil(
      'handles, timers and listeners to return to baseline',
      async () => {
        const now = await snapshot();
        return (
          JSON.stringify(withoutTimers(now)) === JSON.stringify(withoutTimers(baseline)) &&
          timers(now) <= timers(baseline) &&
          now
        );
      },
      5_000,
    ).catch(async () => snapshot());
    contention.unsubscribe();

    figure('leaks: 10k mixed cycles took (ms)', elapsed);
    figure('leaks: baseline', JSON.stringify(baseline));
    figure('leaks: outcomes', JSON.stringify(tally));
    const { acquired, busy, aborted, storeSilent } = tally;
    expect(acquired + busy + aborted + storeSilent).toBe(CYCLES + LANES * WARM_UP);
    // Timers of other work in this worker process (earlier spec files) may end meanwhile, so
    // timers must not grow; everything else must be back exactly.
    expect(withoutTimers(after)).toEqual(withoutTimers(baseline));
    expect(timers(after)).toBeLessThanOrEqual(timers(baseline));
    expect(await engineState(engine, redis.probe)).toEqual(ENGINE_IDLE);
    expect(engine.heldCount).toBe(0);
    expect(await activeChannels(redis.probe)).toEqual([]);
    expect(await scanKeys(redis.probe)).toEqual(
      Array.from({ length: LANES }, (_, lane) => `lock:busy:${lane}`).sort(),
    );
    expect(abortWhenContended.size).toBe(0);
  }, 120_000);
});

type Snapshot = { resources: Record<string, number> };

function timers(snapshot: unknown): number {
  return (snapshot as Snapshot).resources.Timeout ?? 0;
}

function withoutTimers(snapshot: unknown): unknown {
  const { resources, ...rest } = snapshot as Snapshot;
  const { Timeout: _timeout, ...others } = resources;
  return { ...rest, resources: others };
}
