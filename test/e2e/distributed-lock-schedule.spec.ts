import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SchedulerRegistry } from '@nestjs/schedule';
import { filter, type Subscription } from 'rxjs';
import { LockService } from '../../lib/index.js';
import { reportFigures } from '../harness/figures.js';
import { RedisServer } from '../harness/redis-server.js';
import { waitUntil } from '../harness/wait-until.js';
import { Probe } from '../fixtures/decorator-app/probe.js';
import { ScheduleAppModule } from '../fixtures/schedule-app/schedule-app.module.js';
import type { JobRun } from '../fixtures/schedule-app/tick-jobs.js';

const APPS = ['app-1', 'app-2'];
/** How long a cron run holds its lock: well inside the 1 s between ticks. */
const JOB_WORK_MS = 400;

/** What happened at one tick of one job: the apps that ran it, and the apps that skipped it. */
interface Tick {
  readonly at: number;
  readonly ran: string[];
  readonly skipped: string[];
}

describe('@DistributedLock on scheduled jobs, two app instances on one Redis', () => {
  let redis: RedisServer;
  let probe: Probe;
  const apps: INestApplicationContext[] = [];
  const subscriptions: Subscription[] = [];
  /** Skipped runs, by job key: the busy events of the lock each app's job did not get. */
  const skips: { key: string; app: string; at: number }[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
    probe = new Probe();
    probe.hold = (label) =>
      label.startsWith('tick-')
        ? new Promise((resolve) => setTimeout(resolve, JOB_WORK_MS))
        : Promise.resolve();
    for (const name of APPS) {
      const app = await NestFactory.createApplicationContext(
        ScheduleAppModule.register(name, { redis: redis.url }, probe),
        { logger: false },
      );
      apps.push(app);
      const busy = app.get(LockService).events$.pipe(filter((event) => event.type === 'busy'));
      subscriptions.push(
        busy.subscribe((event) => skips.push({ key: event.key, app: name, at: performance.now() })),
      );
    }
  });

  afterAll(async () => {
    subscriptions.forEach((subscription) => subscription.unsubscribe());
    await Promise.all(apps.map((app) => app.close()));
    await redis?.stop();
  });

  /** Groups runs and skips into ticks: both apps fire within ms of each other, ticks are 1 s apart. */
  function ticksOf(job: string, key: string): Tick[] {
    const happenings = [
      ...(probe.notesOf(job) as JobRun[]).map((run) => ({ ...run, ran: true })),
      ...skips.filter((skip) => skip.key === key).map((skip) => ({ ...skip, ran: false })),
    ].sort((a, b) => a.at - b.at);
    const ticks: Tick[] = [];
    for (const happening of happenings) {
      let tick = ticks[ticks.length - 1];
      if (!tick || happening.at - tick.at > 600) {
        tick = { at: happening.at, ran: [], skipped: [] };
        ticks.push(tick);
      }
      (happening.ran ? tick.ran : tick.skipped).push(happening.app);
    }
    return ticks;
  }

  it.each(['tick-above', 'tick-below', 'sweep'])('registers the job %s in every app', (name) => {
    for (const app of apps) {
      const registry = app.get(SchedulerRegistry);
      if (name === 'sweep') expect(registry.getIntervals()).toContain(name);
      else expect(registry.getCronJob(name)).toBeDefined();
    }
  });

  it.each([
    ['above', 'tick-above', 'tick:above'],
    ['below', 'tick-below', 'tick:below'],
  ])(
    "with @DistributedLock %s @Cron() and onBusy: 'skip', runs each tick in only one app",
    async (_, job, key) => {
      // A tick both apps fired at: one ran, one skipped. Ticks at start-up may lack an app.
      const complete = (tick: Tick) => tick.ran.length + tick.skipped.length === APPS.length;
      await waitUntil(
        'three ticks fired in both apps',
        () => ticksOf(job, key).filter(complete).length >= 3,
        10_000,
        50,
      );

      const ticks = ticksOf(job, key);
      for (const tick of ticks) expect(tick.ran).toHaveLength(1);
      for (const tick of ticks.filter(complete)) expect(tick.skipped).toHaveLength(1);
      expect((probe.notesOf(job) as JobRun[]).every((run) => run.key === key)).toBe(true);
      reportFigures(`cron ${job}`, {
        ticks: ticks.length,
        runsPerTick: ticks.map((tick) => tick.ran.length),
        ranIn: ticks.map((tick) => tick.ran[0]),
      });
    },
  );

  it('runs an @Interval() handler under its lock', async () => {
    await waitUntil('the interval ran a few times', () => probe.notesOf('sweep').length >= 4);

    const runs = probe.notesOf('sweep') as JobRun[];
    expect(runs.map((run) => run.key)).toEqual(runs.map(() => 'sweep'));
    expect(new Set(runs.map((run) => run.app))).toEqual(new Set(APPS));
  });
});
