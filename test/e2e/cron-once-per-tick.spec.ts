import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { reportFigures } from '../harness/figures.js';
import { waitUntil } from '../harness/wait-until.js';
import { useRedisServer } from '../harness/use-redis.js';
import {
  MIN_HOLD_MS,
  ReportAppModule,
  ReportJob,
  type Runs,
} from '../fixtures/schedule-app/once-per-tick.job.js';

const INSTANCES = ['a', 'b', 'c'];
/** When each instance's tick fires, ms after the round starts: timers and clocks differ. */
const STAGGER_MS = [0, 30, 150];
const ROUNDS = 10;

describe("a job with onBusy: 'skip' on 3 instances whose ticks are staggered (0, 30, 150 ms)", () => {
  const redis = useRedisServer({ clients: false });
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

  /** Fires each instance's tick at its offset, round after round; the runs per round. */
  async function tickRounds(job: 'run' | 'runUnheld'): Promise<number[]> {
    runs.clear();
    for (let round = 0; round < ROUNDS; round++) {
      const ticks = apps.map(async (app, i) => {
        await new Promise((resolve) => setTimeout(resolve, STAGGER_MS[i]));
        return app.get(ReportJob)[job](round);
      });
      await Promise.all(ticks);
      // The next tick comes once this one's lock is free again.
      await new Promise((resolve) => setTimeout(resolve, MIN_HOLD_MS));
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

  it('canary: without minHold, a later tick finds the lock free and runs again', async () => {
    const perRound = await tickRounds('runUnheld');

    reportFigures('cron runs per round (no minHold)', { perRound });
    expect(perRound.every((runsInRound) => runsInRound >= 2)).toBe(true);
  });
});
