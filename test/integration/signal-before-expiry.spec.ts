import { leaseMargin } from '../../lib/engine/request/lock-request.js';
import { ChildWorker } from '../harness/child-workers.js';
import { figure } from '../harness/figures.js';
import { loopLag } from '../harness/loop-lag.js';
import { useRedisServer, useTestEngine } from '../harness/use-redis.js';

// A lease that runs out aborts its holder's `signal` before another client can hold the key:
// the local deadline keeps a margin (`leaseMargin`) before the earliest the key can expire in
// Redis, since a timer fires at or after its time, never before. Another process spins on
// `SET NX` while the holder's lease runs out; both stamp the clock every process shares. The
// holder's event loop stalls across the lease's end, for less than the margin: a timer set for
// the lease's end (the canary: no margin) then fires after the other process took the key.
const TTL = 300;
const TRIALS = 30;
const MS = 1_000_000n;
const STALL_MS = 15;
const STALL_BEFORE_END_MS = 10;

function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("a lease's end", () => {
  const redis = useRedisServer();
  const fixture = useTestEngine(redis);
  let spinner: ChildWorker;

  beforeAll(async () => {
    spinner = ChildWorker.spawn('set-nx-spinner', { port: redis.server.port });
    await spinner.next('ready', 15_000);
    spinner.send({ type: 'start' });
  });

  afterAll(async () => {
    spinner.send({ type: 'spin' });
    await spinner.stop();
  });

  it(`aborts the holder's signal before another process takes the key (${TRIALS} trials), where a timer at the lease's end would not`, async () => {
    const margin = leaseMargin(TTL);
    let judged = 0;
    let lateAtLeaseEnd = 0;
    let tightest = Infinity;
    for (let trial = 0; trial < TRIALS; trial++) {
      const lag = loopLag();
      const sentAt = process.hrtime.bigint();
      const lock = await fixture.engine.acquire(`k${trial}`, { ttl: TTL, autoRenew: false });
      // The canary: the deadline without its margin, the lease's end counted from its send.
      let leaseEndAt = 0n;
      const untilLeaseEnd = Number(sentAt + BigInt(TTL) * MS - process.hrtime.bigint()) / 1e6;
      const timer = setTimeout(() => (leaseEndAt = process.hrtime.bigint()), untilLeaseEnd);
      const stall = setTimeout(() => busyWait(STALL_MS), untilLeaseEnd - STALL_BEFORE_END_MS);
      let abortedAt = 0n;
      lock.signal.addEventListener('abort', () => (abortedAt = process.hrtime.bigint()));
      spinner.send({ type: 'spin', key: `lock:k${trial}` });
      const took = BigInt((await spinner.next<{ type: string; at: string }>('took', 5_000)).at);
      await new Promise((resolve) => setTimeout(resolve, 5));
      clearTimeout(timer);
      clearTimeout(stall);
      const stalled = lag.stop();
      expect(abortedAt).toBeGreaterThan(0n);
      if (leaseEndAt === 0n || leaseEndAt > took) lateAtLeaseEnd++;
      // The guarantee holds while no stall of the holder's event loop exceeds the margin.
      if (stalled >= margin) continue;
      judged++;
      tightest = Math.min(tightest, Number(took - abortedAt) / 1e6);
      expect(abortedAt).toBeLessThan(took);
    }
    figure('signal-before-expiry: closest abort before the other grant (ms)', tightest);
    figure('signal-before-expiry: trials a timer at the lease end heard too late', lateAtLeaseEnd);
    expect(STALL_MS).toBeLessThan(margin);
    expect(judged).toBeGreaterThanOrEqual(TRIALS / 2);
    expect(lateAtLeaseEnd).toBeGreaterThan(TRIALS / 2);
  }, 60_000);
});
