import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { reportFigures } from '../harness/figures.js';
import { waitUntil } from '../harness/waits.js';
import { useRedisServer } from '../harness/use-redis.js';
import {
  MIN_HOLD_MS,
  ReportAppModule,
  ReportJob,
  type Runs,
} from '../fixtures/schedule-app/once-per-tick.job.js';

const INSTANCES = ['a', 'b', 'c'];
const ROUNDS = 10;
/** The lock key of each job, as Redis holds it. */
const KEYS = { run: 'lock:report:nightly', runUnheld: 'lock:report:nightly-unheld' } as const;

describe("a job with onBusy: 'skip' on 3 instances whose ticks come one after another", () => {
  const redis = useRedisServer();
  const apps: INestApplicationContext[] = [];
  const runs: Runs = new Map();

  beforeAll(async () => {
    for (const instance of INSTANCES) {
      const module = ReportAppModule.register(instance, redis.server.url, runs);
      apps.push(await NestFactory.createApplicationContext(module, { logger: false }));
    }
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  /**
   * Round after round, ticks each instance once the previous instance's tick has returned: a
   * run's lock is released by then, the widest spread of ticks a round can have (timers and
   * clocks differ), with no timing in the test. The runs per round.
   */
  async function tickRounds(job: 'run' | 'runUnheld'): Promise<number[]> {
    runs.clear();
    for (let round = 0; round < ROUNDS; round++) {
      const startedAt = performance.now();
      for (const app of apps) await app.get(ReportJob)[job](round);
      // With minHold, the ticks must fall inside one run's minHold, or the test shows nothing.
      if (job === 'run') expect(performance.now() - startedAt).toBeLessThan(MIN_HOLD_MS);
      // The next round begins once this one's lock is free again.
      await waitUntil(
        'the lock to be free again',
        async () => !(await redis.probe.exists(KEYS[job])),
      );
    }
    return Array.from({ length: ROUNDS }, (_, round) => runs.get(round)?.length ?? 0);
  }

  it('runs exactly once per round with minHold', async () => {
    const perRound = await tickRounds('run');

    reportFigures('cron runs per round (minHold)', { perRound });
    expect(perRound).toEqual(Array(ROUNDS).fill(1));
  });

  it('skips ticks quietly while Redis is down, and runs again once it is back', async () => {
    const job = apps[0]!.get(ReportJob);
    await redis.server.stop();
    try {
      // Each tick resolves without running: nothing is thrown for the scheduler to log per tick.
      for (let tick = 0; tick < 3; tick++) expect(await job.run(100 + tick)).toBeUndefined();
      expect([100, 101, 102].map((round) => runs.get(round))).toEqual([
        undefined,
        undefined,
        undefined,
      ]);
    } finally {
      await redis.server.restart();
    }
    await waitUntil('a tick to run again', async () => (await job.run(200)) === 'ran', 5_000, 50);
  });

  it('canary: without minHold, every later tick finds the lock free and runs again', async () => {
    const perRound = await tickRounds('runUnheld');

    reportFigures('cron runs per round (no minHold)', { perRound });
    expect(perRound).toEqual(Array(ROUNDS).fill(INSTANCES.length));
  });
});
