import { fileURLToPath } from 'node:url';
import { BASELINE_COMMIT, CURRENT_BUILD, ensureBaseline } from './baseline-build.js';
import {
  describeCounts,
  openCommandWindow,
  sumCounts,
  total,
  type CommandCounts,
} from './command-counter.js';
import { freshKey, type ScenarioContext } from './context.js';
import { runSlicedCell, withPairedRatio, type RunOutcome, type ScenarioResult } from './results.js';
import { mean, percentile, sleep, spread } from './stats.js';
import { BenchWorker } from './worker-pool.js';

/** Unmeasured hand-offs per build first: the JIT, and each script's first NOSCRIPT. */
const WARM_UP = 20;
const REPLY_MS = 15_000;

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** One build's two processes: one holds each key, the other waits for it. */
interface Pair {
  readonly name: string;
  readonly settings: string;
  readonly holder: BenchWorker;
  readonly waiter: BenchWorker;
}

/** One hand-off, as the processes and the server measured it. */
interface Sample {
  /** From the holder calling release() to the waiter holding the lock, ms. */
  readonly latencyMs: number;
  /** The holder's release() call, ms. */
  readonly releaseMs: number;
  readonly commands: CommandCounts;
  readonly holderCpuUs: number;
  readonly waiterCpuUs: number;
  readonly redisCpuUs: number;
}

/**
 * The cross-process hand-off of issue 43, side by side with the build of 407040a: a holder in
 * one process releases a key, a waiter in another gets it. Each build runs its own two
 * processes on the same Redis and the same client library; the builds take turns hand-off by
 * hand-off (the order rotated each turn), so the machine's swings fall on both alike.
 */
export async function runHandOffBuilds(context: ScenarioContext): Promise<ScenarioResult> {
  const { options, log } = context;
  const builds = [
    {
      name: CURRENT_BUILD,
      dir: ROOT,
      settings: "this checkout's dist/ (npm run bench builds it first)",
    },
    {
      name: BASELINE_COMMIT,
      dir: ensureBaseline(options.baseline, log),
      settings: `dist/ of commit ${BASELINE_COMMIT} in ${options.baseline}, on this checkout's node_modules`,
    },
  ];
  const pairs: Pair[] = builds.map(({ name, settings }) => ({
    name,
    settings,
    holder: new BenchWorker(`${name} holder`, 'hand-off-worker.ts'),
    waiter: new BenchWorker(`${name} waiter`, 'hand-off-worker.ts'),
  }));
  const workers = pairs.flatMap(({ holder, waiter }) => [holder, waiter]);
  try {
    pairs.forEach((pair, i) => {
      for (const worker of [pair.holder, pair.waiter])
        worker.send({ type: 'init', url: context.target.url, build: builds[i].dir });
    });
    await Promise.all(workers.map((worker) => worker.next('ready', 60_000)));
    for (let i = 0; i < WARM_UP; i++) for (const pair of pairs) await handOff(context, pair);
    const count = options.durations.handOffs;
    const cell = await runSlicedCell(
      `${count} hand-offs`,
      { handOffs: count },
      pairs,
      { reps: options.reps[10], slices: count, finish: figuresOf },
      (pair) => handOff(context, pair),
      log,
    );
    return {
      id: 10,
      title: `Hand-off to a waiter in another process: this code against ${BASELINE_COMMIT}`,
      cells: [withPairedRatio(cell, BASELINE_COMMIT, 'handOffP50', 'ratioToOldP50')],
      notes: [
        `Per build, one process holds a fresh key and another waits for it (ttl 30 s, wait 10 s, both on ioredis); once the waiter's first attempt found the key busy and its release channel is subscribed, the holder releases. Hand-off: from the holder calling release() to the waiter holding the lock, read as performance.timeOrigin + now() in each process. ${count} hand-offs per build and repetition after ${WARM_UP} unmeasured ones, the builds taking turns hand-off by hand-off.`,
        `× old p50: median of the per-repetition ratios of p50 to ${BASELINE_COMMIT}'s; min–max show the noise. release ms: p50 of the holder's release() call.`,
        'cmds/hand-off: commands the server ran (commandstats, inside scripts included) from just before the release to the grant; CPU µs: per hand-off, the holder over its release() call, the waiter from just before the release to its grant, Redis over the same window.',
      ],
    };
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
  }
}

async function handOff(context: ScenarioContext, { holder, waiter }: Pair): Promise<Sample> {
  const { admin } = context.target;
  const key = freshKey('handoff');
  holder.send({ type: 'hold', key });
  await holder.next('held', REPLY_MS);
  waiter.send({ type: 'wait', key });
  await waiter.next('waiting', REPLY_MS);
  await untilSubscribed(context, key);
  waiter.send({ type: 'mark' });
  await waiter.next('marked', REPLY_MS);
  const closeWindow = await openCommandWindow(admin);
  holder.send({ type: 'release' });
  const released = await holder.next('released', REPLY_MS);
  waiter.send({ type: 'report' });
  const granted = await waiter.next('granted', REPLY_MS);
  const { server, cpu } = await closeWindow();
  waiter.send({ type: 'drop' });
  await waiter.next('dropped', REPLY_MS);
  return {
    latencyMs: Number(granted.at) - Number(released.at),
    releaseMs: Number(released.releaseMs),
    commands: server,
    holderCpuUs: Number(released.cpuUs),
    waiterCpuUs: Number(granted.cpuUs),
    redisCpuUs: cpu.redisUs,
  };
}

/**
 * Waits until a channel naming `key` has a subscriber: the waiter's release channel (both
 * builds name it after the lock key), so that the release has someone to tell.
 */
async function untilSubscribed(context: ScenarioContext, key: string): Promise<void> {
  const deadline = performance.now() + REPLY_MS;
  while (true) {
    const channels = (await context.target.admin.call(
      'PUBSUB',
      'CHANNELS',
      `*${key}*`,
    )) as string[];
    if (channels.length > 0) return;
    if (performance.now() > deadline) throw new Error(`nobody subscribed for ${key}`);
    await sleep(1);
  }
}

/** A build's figures for one repetition, from its hand-offs. */
function figuresOf(samples: Sample[]): RunOutcome {
  const { p50, p99 } = spread(samples.map((sample) => sample.latencyMs));
  const commands = sumCounts(samples.map((sample) => sample.commands));
  return {
    figures: {
      handOffs: samples.length,
      handOffP50: p50,
      handOffP99: p99,
      releaseP50: percentile(
        samples.map((sample) => sample.releaseMs),
        50,
      ),
      cmdsPerHandOff: total(commands) / samples.length,
      holderCpuUs: mean(samples.map((sample) => sample.holderCpuUs)),
      waiterCpuUs: mean(samples.map((sample) => sample.waiterCpuUs)),
      redisCpuUs: mean(samples.map((sample) => sample.redisCpuUs)),
    },
    commandMix: describeCounts(commands, samples.length, 8),
  };
}
