import { openCommandWindow, total } from './command-counter.js';
import { canCollect, heapUsed } from './heap.js';
import type { ScenarioContext } from './context.js';
import { HOLDERS, HOLD_TTL_MS, type RenewingHolder } from './renewing-holders.js';
import { runCell, type ScenarioResult } from './results.js';
import { sleep } from './stats.js';

const ACQUIRE_CONCURRENCY = 200;
const MB = 1024 * 1024;

/**
 * Many held locks: N locks taken at once and kept by each library's auto-renewal for a while.
 * Measures renewal traffic (top-level calls and, from commandstats, everything scripts ran)
 * and the heap: the cost of holding N locks and its growth while only renewal runs.
 */
export async function runHeldLocks(context: ScenarioContext): Promise<ScenarioResult> {
  const { target, options, log } = context;
  if (!canCollect) log('  (no --expose-gc: heap figures include uncollected garbage)');
  const names = ['library', 'redlock', 'redis-semaphore'];
  const contenders = names.map((name, i) => ({ name, settings: '', create: HOLDERS[i] }));
  for (const { create } of contenders) await renewOnce(await create(target.url));
  const settings = new Map<string, string>();
  const cell = await runCell(
    `${options.durations.heldLocks} locks, ttl ${HOLD_TTL_MS} ms, ${options.durations.heldLocksMs / 1000} s`,
    {
      locks: options.durations.heldLocks,
      ttlMs: HOLD_TTL_MS,
      holdMs: options.durations.heldLocksMs,
    },
    contenders,
    options.reps[5],
    async ({ create }) => {
      await target.admin.flushall();
      const holder = await create(target.url);
      settings.set(holder.name, holder.settings);
      try {
        return { figures: await holdMany(context, holder) };
      } finally {
        await holder.close();
      }
    },
    log,
  );
  const results = cell.results.map((result) => ({
    ...result,
    settings: settings.get(result.contender) ?? '',
  }));
  return {
    id: 5,
    title: 'Many held locks with auto-renewal',
    cells: [{ ...cell, results }],
    notes: [
      'heapHeld: heap after taking every lock − before (after a full GC each time). heapGrowth: heap at the end of the hold − right after taking them. heapAfterRelease: after releasing all − before.',
      'Before the first repetition, each contender holds one lock through one renewal, so its scripts are loaded on the server, as in an app that has run a while: the first call of a script on a fresh server costs a second call (NOSCRIPT, then the script body).',
      'topLevelPerSec: calls the client sent while only renewal ran; cmdsPerSec adds the commands run inside scripts; callsPerTick: top-level calls per renewal round, where a round renews every lease once (rounds = PEXPIREs and SETs run, from commandstats, over the number of locks).',
    ],
  };
}

/** Holds one lock past its first renewal (ttl/3), then lets go. */
async function renewOnce(holder: RenewingHolder): Promise<void> {
  try {
    const release = await holder.hold(`held:warm-up:${holder.name}`);
    await sleep(HOLD_TTL_MS / 3 + 200);
    await release();
  } finally {
    await holder.close();
  }
}

async function holdMany(context: ScenarioContext, holder: RenewingHolder) {
  const { target, options } = context;
  const count = options.durations.heldLocks;
  const releases: (() => Promise<void>)[] = [];
  const before = await heapUsed();
  const acquireStart = performance.now();
  let next = 0;
  let acquireErrors = 0;
  const taker = async (): Promise<void> => {
    while (next < count) {
      try {
        releases.push(await holder.hold(`held:${holder.name}:${next++}`));
      } catch {
        acquireErrors++;
      }
    }
  };
  await Promise.all(Array.from({ length: ACQUIRE_CONCURRENCY }, taker));
  const acquireMs = performance.now() - acquireStart;
  const held = await heapUsed();
  const closeWindow = await openCommandWindow(target.admin);
  await sleep(options.durations.heldLocksMs);
  const commands = await closeWindow();
  const end = await heapUsed();
  const keysAtEnd = await target.admin.dbsize();
  const lost = holder.lost();
  await Promise.all(releases.splice(0).map((release) => release()));
  const afterRelease = await heapUsed();
  const seconds = options.durations.heldLocksMs / 1000;
  // Only renewal runs in the window, and every renewal of a lease runs exactly one PEXPIRE
  // (library, redis-semaphore) or SET (redlock): counting them gives the renewal rounds done,
  // free of the ±1-tick rounding that dividing by the window's length would carry.
  const leasesRenewed = (commands.server.pexpire ?? 0) + (commands.server.set ?? 0);
  // A window edge can cut one round in two, so rounds are counted whole.
  const rounds = Math.round(leasesRenewed / count);
  return {
    topLevelPerSec: total(commands.client) / seconds,
    cmdsPerSec: total(commands.server) / seconds,
    leasesRenewedPerSec: leasesRenewed / seconds,
    callsPerTick: rounds > 0 ? total(commands.client) / rounds : NaN,
    heapHeldMB: (held - before) / MB,
    heapGrowthMB: (end - held) / MB,
    heapAfterReleaseMB: (afterRelease - before) / MB,
    keysAtEnd,
    lost,
    releaseErrors: holder.releaseErrors(),
    acquireErrors,
    acquireMs,
  };
}
