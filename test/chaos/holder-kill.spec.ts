import { LockBusyError } from '../../lib/errors/lock.errors.js';
import { ChildWorker, killLiveWorkers } from '../harness/child-workers.js';
import { reportFigures } from '../harness/figures.js';
import { useRedisServer, useTestEngine } from '../harness/use-redis.js';
import { loopLag } from '../harness/loop-lag.js';
import { outcome } from '../harness/waits.js';
import { recordEvents } from '../harness/engine-events.js';
import type { ChaosHolderConfig } from '../fixtures/chaos-holder-worker.js';
import { CHAOS, timeoutFor } from '../harness/chaos-profile.js';

const TTL = 1_000;
// The test engine's: the longest a waiter sleeps without a release notification.
const POLL_CAP = 1_000;
// PTTL is whole milliseconds, rounded down.
const EARLY_SLACK = 2;
// A round trip, the waiter's jitter (up to 50 ms) and timer slack, plus the measured lag.
const MARGIN = 200;
const SPAWN_TIMEOUT = 15_000;

describe('a holder process killed (SIGKILL) while holding', () => {
  const redis = useRedisServer({ beforeStop: killLiveWorkers });
  const fixture = useTestEngine(redis, { pollCap: POLL_CAP });

  function spawnHolder(key: string, lock: ChaosHolderConfig['lock']): ChildWorker {
    const config: ChaosHolderConfig = { port: redis.server.port, key, ttl: TTL, lock };
    return ChildWorker.spawn('chaos-holder-worker', config, `holder of ${key}`);
  }

  /** Reads the dead-to-be holder's lease, then kills it: when the lease ends at the earliest. */
  async function killHolder(worker: ChildWorker, key: string): Promise<number> {
    const { token } = await worker.next('holding', SPAWN_TIMEOUT);
    const readAt = performance.now();
    const [[, value], [, pttl]] = (await redis.probe
      .pipeline()
      .get(`lock:${key}`)
      .pttl(`lock:${key}`)
      .exec())!;
    await worker.kill();
    expect(value).toBe(token);
    // A renewal sent after the read only makes the lease longer.
    return readAt + (pttl as number);
  }

  it(
    'hands the key to the next holder when the lease ends: never before, and not much after',
    async () => {
      for (let round = 0; round < CHAOS.rounds; round++) await killThenTake(`killed:${round}`);
    },
    timeoutFor(SPAWN_TIMEOUT + 3 * TTL),
  );

  async function killThenTake(key: string): Promise<void> {
    const worker = spawnHolder(key, 'library');
    const leaseEnd = await killHolder(worker, key);
    const killedAt = performance.now();
    const recorder = recordEvents(fixture.engine);
    const lag = loopLag();

    const lock = await fixture.engine.acquire(key, { ttl: TTL, wait: 10 * TTL });
    const gotAt = performance.now();
    const slack = lag.stop();
    recorder.stop();

    reportFigures('holder kill: lease end -> next holder', {
      ms: Math.round(gotAt - leaseEnd),
      leaseLeftAtKill: Math.round(leaseEnd - killedAt),
    });
    expect(leaseEnd).toBeGreaterThan(killedAt);
    expect(recorder.events).toContainEqual(expect.objectContaining({ type: 'contended', key }));
    expect(gotAt).toBeGreaterThanOrEqual(leaseEnd - EARLY_SLACK);
    expect(gotAt).toBeLessThanOrEqual(killedAt + TTL + POLL_CAP + MARGIN + slack);
    expect(await redis.probe.get(`lock:${key}`)).toBe(lock.token);
    expect(await lock.release()).toBe('released');
  }

  // Canary: a lock with no lease outlives its dead holder for good.
  it(
    'canary: a lock without a lease (SET NX, no PX) stays taken after its holder is killed',
    async () => {
      const worker = spawnHolder('no-lease', 'no-lease');
      await worker.next('holding', SPAWN_TIMEOUT);
      await worker.kill();

      const { error } = await outcome(fixture.engine.acquire('no-lease', { wait: 2 * TTL }));

      expect(error).toBeInstanceOf(LockBusyError);
      expect(await redis.probe.get('lock:no-lease')).toBe('no-lease');
      expect(await redis.probe.pttl('lock:no-lease')).toBe(-1);
    },
    SPAWN_TIMEOUT + 10_000,
  );
});
