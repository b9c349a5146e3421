import { ChildWorker, killLiveWorkers } from '../harness/child-workers.js';
import { reportFigures } from '../harness/figures.js';
import { useRedisServer } from '../harness/use-redis.js';
import { waitUntil } from '../harness/waits.js';
import type { ChaosLoadConfig, ChaosLoadResult } from '../fixtures/chaos-load-worker.js';
import { CHAOS, timeoutFor } from '../harness/chaos-profile.js';
import { FaultTimeline } from '../harness/fault-timeline.js';
import {
  classifyOverlaps,
  countOverlapsPerKey,
  describeOverlap,
  hrNow,
  inAny,
  MS,
  overlapsPerKey,
  sectionsOf,
  type Overlap,
  type Section,
  type Window,
} from '../harness/chaos-sections.js';

const WORKERS = 2;
const LOOPS_PER_WORKER = 25;
const KEYS = 20;
const TTL = 1_500;
const STORE_TIMEOUT = 1_000;
const WAIT = 2_000;
// Inside every lease: a lease has at least ttl - ttl/3 = 1000 ms left when renewal stalls.
const SHORT_PAUSE_MS = 700;
// Past the lease and the store timeout: leases lapse in Redis, calls fail.
const LONG_PAUSE_MS = 1_500;
// After a restart without persistence a holder runs on until its next renewal (ttl/3) finds
// its key gone; the slack covers ioredis' reconnect back-off and a loaded machine.
const RESTART_WINDOW_MS = TTL / 3 + 500;
// What a pause causes shows within this after Redis resumes: a holder whose lease lapsed
// finishes its section once Redis answers, and hears of the loss by then.
const AFTERMATH_MS = 500;
// The holder's watchdog timer and the next holder's acquire race on different processes.
const TOLD_SLACK_MS = 20;
// A call sent just before a fault ends fails up to its own timeout, or its wait, later.
const FAILURE_TAIL_MS = WAIT + STORE_TIMEOUT + 1_000;
// Sections (all loops together) each phase must see before the next fault.
const PHASE_SECTIONS = 300;
const PHASE_TIMEOUT = CHAOS.phaseMs + 15_000;
const SPAWN_TIMEOUT = 20_000;

describe('50 withLock loops over 20 keys in 2 processes, with Redis paused and restarted', () => {
  const redis = useRedisServer({ beforeStop: killLiveWorkers });

  async function startLoad(useLock: boolean): Promise<ChildWorker[]> {
    const workers = Array.from({ length: WORKERS }, (_, i) => {
      const config: ChaosLoadConfig = {
        port: redis.server.port,
        keys: KEYS,
        loops: LOOPS_PER_WORKER,
        firstLoop: i * LOOPS_PER_WORKER,
        ttl: TTL,
        wait: WAIT,
        storeTimeout: STORE_TIMEOUT,
        useLock,
      };
      return ChildWorker.spawn('chaos-load-worker', config, `load#${i}`);
    });
    await Promise.all(workers.map((worker) => worker.next('ready', SPAWN_TIMEOUT)));
    for (const worker of workers) worker.send({ type: 'start' });
    return workers;
  }

  async function stopLoad(workers: ChildWorker[]): Promise<ChaosLoadResult[]> {
    for (const worker of workers) worker.send({ type: 'stop' });
    const results = await Promise.all(
      workers.map((worker) => worker.next('result', WAIT + STORE_TIMEOUT + 10_000)),
    );
    await Promise.all(workers.map((worker) => worker.stop()));
    return results.map((result) => result.value as ChaosLoadResult);
  }

  /** Sections completed so far, by the counters in Redis (a restart starts them again). */
  async function counted(): Promise<number> {
    const keys = Array.from({ length: KEYS }, (_, key) => `count:${key}`);
    const values = await redis.probe.mget(keys);
    return values.reduce((sum, value) => sum + Number(value ?? 0), 0);
  }

  /** Lets the load run for at least the profile's phase and `PHASE_SECTIONS` sections. */
  async function phase(what: string): Promise<void> {
    const base = await counted();
    const until = performance.now() + CHAOS.phaseMs;
    await waitUntil(
      `${PHASE_SECTIONS} sections ${what}`,
      async () => performance.now() >= until && (await counted()) >= base + PHASE_SECTIONS,
      PHASE_TIMEOUT,
      50,
    );
  }

  /** The load, with every fault `CHAOS.rounds` times, each followed by a phase of load. */
  async function runWithFaults(): Promise<{
    results: ChaosLoadResult[];
    faults: FaultTimeline;
    startedAt: bigint;
  }> {
    const faults = new FaultTimeline(redis.server);
    const workers = await startLoad(true);
    const startedAt = hrNow();
    await phase('before the faults');
    for (let round = 0; round < CHAOS.rounds; round++) {
      await faults.pause('short pause', SHORT_PAUSE_MS);
      await phase('after the short pause');
      await faults.pause('long pause', LONG_PAUSE_MS);
      await phase('after the long pause');
      await faults.restart('restart');
      await phase('after the restart');
    }
    return { results: await stopLoad(workers), faults, startedAt };
  }

  it(
    'keeps one section per key but in the documented windows, and every loop goes on',
    async () => {
      const { results, faults, startedAt } = await runWithFaults();

      const sections = sectionsOf(results);
      const overlaps = overlapsPerKey(sections);
      const restarts = faults.windows('restart', RESTART_WINDOW_MS);
      const classes = classifyOverlaps(
        overlaps,
        { documented: restarts, lapses: faults.windows('long pause', AFTERMATH_MS) },
        TOLD_SLACK_MS,
      );
      const losses = results.flatMap((result) => result.losses);
      const failures = results.flatMap((result) => result.failures);
      const anyFault = faults.windows(undefined, FAILURE_TAIL_MS);
      const loopsAfter = loopsCompletingAfter(sections, faults.windows('restart', 0).at(-1)![1]);
      reportFigures('load under faults', {
        sections: sections.length,
        overlapsAfterRestart: classes.documented.length,
        lastOfThemAfterRedisBackMs: lastEntryAfter(
          classes.documented,
          faults.windows('restart', 0),
        ),
        overlapsAfterLapseHolderTold: classes.told.length,
        silentOverlaps: classes.silent.length,
        losses: tally(losses.map(([what]) => what)),
        failures: tally(failures.map(([name]) => name)),
        loopsCompletingAfterRestart: loopsAfter.size,
      });

      expect(countOverlapsPerKey(sections)).toBe(overlaps.length);
      expect(classes.silent.map((overlap) => describeOverlap(overlap, startedAt))).toEqual([]);
      expect(results.flatMap((result) => result.unhandled)).toEqual([]);
      // Renewal rides out a pause shorter than what is left of a lease when it stalls...
      expect(stampedIn(losses, faults.windows('short pause', AFTERMATH_MS))).toEqual([]);
      // ...while each long pause and each restart cost holders their locks: the faults bite.
      for (const window of [...faults.windows('long pause', AFTERMATH_MS), ...restarts]) {
        expect(stampedIn(losses, [window]).length).toBeGreaterThan(0);
      }
      // Locks are lost, and calls fail, only because of a fault.
      expect(losses.filter(([, at]) => !inAny(BigInt(at), anyFault))).toEqual([]);
      expect(failures.filter(([, at]) => !inAny(BigInt(at), anyFault))).toEqual([]);
      // Every loop came back by itself, with nothing restarted but Redis.
      expect(loopsAfter.size).toBe(WORKERS * LOOPS_PER_WORKER);
    },
    timeoutFor(
      3 * PHASE_TIMEOUT + SHORT_PAUSE_MS + LONG_PAUSE_MS,
      2 * SPAWN_TIMEOUT + PHASE_TIMEOUT,
    ),
  );

  // Canary: the same workers and checker without the lock see sections of one key overlap.
  it(
    'canary: the same loops without the lock overlap',
    async () => {
      const workers = await startLoad(false);
      await phase('without the lock');
      const results = await stopLoad(workers);

      const sections = sectionsOf(results);
      reportFigures('load canary (no lock)', {
        sections: sections.length,
        overlaps: countOverlapsPerKey(sections),
      });
      expect(countOverlapsPerKey(sections)).toBeGreaterThan(0);
      expect(results.flatMap((result) => result.unhandled)).toEqual([]);
    },
    PHASE_TIMEOUT + 2 * SPAWN_TIMEOUT,
  );
});

/** The stamped events (losses, failures) that happened in one of `windows`. */
function stampedIn(
  events: readonly (readonly [string, string])[],
  windows: readonly Window[],
): (readonly [string, string])[] {
  return events.filter(([, at]) => inAny(BigInt(at), windows));
}

/** How long after the end of the fault before it the last of `overlaps` began, in ms. */
function lastEntryAfter(overlaps: readonly Overlap[], faults: readonly Window[]): number {
  let latest = 0n;
  for (const { second } of overlaps) {
    const end = faults.filter(([from]) => from <= second.enter).at(-1)?.[1];
    if (end !== undefined && second.enter - end > latest) latest = second.enter - end;
  }
  return Number(latest / MS);
}

/** The loops that entered, and completed, a section after `at`. */
function loopsCompletingAfter(sections: readonly Section[], at: bigint): Set<number> {
  const after = sections.filter((section) => section.done && section.enter > at);
  return new Set(after.map((section) => section.loop));
}

function tally(names: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of names) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}
