import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SchedulerRegistry } from '@nestjs/schedule';
import { filter, type Subscription } from 'rxjs';
import { LockService } from '../../lib/index.js';
import { reportFigures } from '../harness/figures.js';
import { RedisServer } from '../harness/redis-server.js';
import { waitUntil } from '../harness/waits.js';
import { Probe } from '../fixtures/decorator-app/probe.js';
import { ScheduleAppModule } from '../fixtures/schedule-app/schedule-app.module.js';
import { tickOf, type JobRun } from '../fixtures/schedule-app/tick-jobs.js';

const APPS = ['app-1', 'app-2'];
/**
 * A cron run holds its lock until this many ms into its tick's second: long enough that an
 * app whose timer fires late (a loaded CI machine) still finds the lock taken, short enough
 * that the lock is free again for the next tick.
 */
const HOLD_UNTIL_MS = 700;

/** What happened at one tick of one job: the apps that ran it, and the apps that skipped it. */
interface Tick {
  readonly tick: number;
  readonly ran: string[];
  readonly skipped: string[];
}

describe('@DistributedLock on scheduled jobs, two app instances on one Redis', () => {
  let redis: RedisServer;
  let probe: Probe;
  const apps: INestApplicationContext[] = [];
  const subscriptions: Subscription[] = [];
  /** Skipped runs: the busy events of the locks each app's jobs did not get. */
  const skips: { key: string; app: string; tick: number }[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
    probe = new Probe();
    probe.hold = async (label) => {
      if (!label.startsWith('tick-')) return;
      const now = Date.now();
      const until = tickOf(now) * 1000 + HOLD_UNTIL_MS;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - now)));
    };
    for (const name of APPS) {
      const app = await NestFactory.createApplicationContext(
        ScheduleAppModule.register(name, { redis: redis.url }, probe),
        { logger: false },
      );
      apps.push(app);
      const busy = app.get(LockService).events$.pipe(filter((event) => event.type === 'busy'));
      subscriptions.push(
        busy.subscribe(({ key }) => skips.push({ key, app: name, tick: tickOf(Date.now()) })),
      );
    }
  });

  afterAll(async () => {
    subscriptions.forEach((subscription) => subscription.unsubscribe());
    await Promise.all(apps.map((app) => app.close()));
    await redis?.stop();
  });

  function ticksOf(job: string, key: string): Tick[] {
    const ticks = new Map<number, Tick>();
    const at = (tick: number) => {
      if (!ticks.has(tick)) ticks.set(tick, { tick, ran: [], skipped: [] });
      return ticks.get(tick)!;
    };
    for (const run of probe.notesOf(job) as JobRun[]) at(run.tick).ran.push(run.app);
    for (const skip of skips.filter((skip) => skip.key === key))
      at(skip.tick).skipped.push(skip.app);
    return [...ticks.values()].sort((a, b) => a.tick - b.tick);
  }

  it.each(['tick-above', 'tick-below'])('registers the cron job %s in every app', (name) => {
    for (const app of apps) expect(app.get(SchedulerRegistry).getCronJob(name)).toBeDefined();
  });

  it('registers the interval in every app', () => {
    for (const app of apps) expect(app.get(SchedulerRegistry).getIntervals()).toContain('sweep');
  });

  it.each([
    ['above', 'tick-above', 'tick:above'],
    ['below', 'tick-below', 'tick:below'],
  ])(
    "with @DistributedLock %s @Cron() and onBusy: 'skip', runs each tick in only one app",
    async (_, job, key) => {
      // A tick both apps fired at. The first ticks may have found only one app started.
      const complete = (tick: Tick) => tick.ran.length + tick.skipped.length === APPS.length;
      await waitUntil(
        'three ticks fired in both apps',
        () => ticksOf(job, key).filter(complete).length >= 3,
        10_000,
        50,
      );

      const ticks = ticksOf(job, key);
      expect(ticks.map((tick) => tick.ran.length)).toEqual(ticks.map(() => 1));
      expect((probe.notesOf(job) as JobRun[]).every((run) => run.key === key)).toBe(true);
      reportFigures(`cron ${job}`, {
        ticks: ticks.length,
        completeTicks: ticks.filter(complete).length,
        ranIn: ticks.map((tick) => tick.ran.join('+')),
        skippedIn: ticks.map((tick) => tick.skipped.join('+')),
      });
    },
  );

  it('runs an @Interval() handler under its lock', async () => {
    await waitUntil('the interval ran in both apps', () => {
      const runs = probe.notesOf('sweep') as JobRun[];
      return APPS.every((app) => runs.some((run) => run.app === app));
    });

    const runs = probe.notesOf('sweep') as JobRun[];
    expect(runs.map((run) => run.key)).toEqual(runs.map(() => 'sweep'));
  });
});
