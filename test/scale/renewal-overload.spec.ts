import type { OverloadConfig, OverloadResult } from '../fixtures/overload-holder.js';
import { ChildWorker, killLiveWorkers } from '../harness/child-workers.js';
import { reportFigures } from '../harness/figures.js';
import { useRedisServer } from '../harness/use-redis.js';

/*
 * A process whose event loop is 40% busy with its own work takes more short leases than it can
 * renew. It may refuse leases (LockOverloadError) or lose some, but never silently: every lease
 * that ran out in Redis while held was told to its holder (its signal aborted) before Redis
 * expired it, and no release answered within the lease finds it gone untold. Redis's own expiry
 * notices (keyspace events, read in this process) date each key's end.
 */
const CONFIG = { locks: 5_000, ttl: 300, holdMs: 3_000, busyMs: 4, everyMs: 10 } as const;

describe(`${CONFIG.locks} leases of ${CONFIG.ttl} ms in a process 40% busy with its own work`, () => {
  const redis = useRedisServer({ beforeStop: killLiveWorkers });

  it('refuses what renewal cannot keep up with, and tells every loss before the key expires', async () => {
    await redis.probe.config('SET', 'notify-keyspace-events', 'Ex');
    const expiredAt = new Map<string, bigint>();
    const notices = redis.connect();
    notices.on('message', (_channel: string, key: string) => {
      if (!expiredAt.has(key)) expiredAt.set(key, process.hrtime.bigint());
    });
    await notices.subscribe('__keyevent@0__:expired');

    const config: OverloadConfig = { port: redis.server.port, ...CONFIG };
    const worker = ChildWorker.spawn('overload-holder', config);
    await worker.next('ready', 30_000);
    worker.send({ type: 'start' });
    const { value } = await worker.next<{ type: string; value: OverloadResult }>('result', 60_000);
    await worker.stop();
    // Keys the worker lost and never released expire now too; their events come within a second.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    notices.disconnect();

    const ranOutWhileHeld = value.held.filter(({ key, releasedAt }) => {
      const expired = expiredAt.get(`lock:${key}`);
      return expired !== undefined && (releasedAt === undefined || expired < BigInt(releasedAt));
    });
    const toldLate = ranOutWhileHeld.filter(
      ({ key, abortedAt }) =>
        abortedAt === undefined || BigInt(abortedAt) >= expiredAt.get(`lock:${key}`)!,
    );
    const lossUntold = value.held.filter(
      ({ released, abortedAt, answeredInTime }) =>
        released !== 'released' && answeredInTime && abortedAt === undefined,
    );
    const lost = value.held.filter(({ abortedAt }) => abortedAt !== undefined);
    reportFigures('renewal overload', {
      admitted: value.held.length,
      refused: value.refused,
      lost: lost.length,
      ranOutWhileHeld: ranOutWhileHeld.length,
      reasons: [...new Set(lost.map(({ reason }) => reason))],
    });

    expect(value.otherErrors).toEqual([]);
    expect(value.held.length + value.refused).toBe(CONFIG.locks);
    // The load was more than renewal keeps up with: some leases were refused, or lost.
    expect(value.refused + lost.length).toBeGreaterThan(0);
    expect(toldLate.map(({ key }) => key)).toEqual([]);
    expect(lossUntold.map(({ key, released }) => `${key}: ${released}`)).toEqual([]);
  }, 90_000);
});
