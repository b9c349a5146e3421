import { libraryLocker, rawLocker, releaseAll, takeAll } from './bulk-lockers.js';
import type { ScenarioContext } from './context.js';
import { collectGarbage } from './heap.js';
import { withPairedRatio, runCell, type ScenarioResult } from './results.js';
import {
  BULK_CONCURRENCY,
  COMMAND_BUDGET_US,
  SCALE_TTL_MS,
  holdAtScale,
} from './scale-held-locks.js';

/** The bulk cell's lease: the library's default, so that no renewal runs while it is measured. */
const BULK_TTL_MS = 30_000;

const CONTENDERS = [
  { name: 'library', settings: `acquire(key, { ttl, wait: 0 }), renewed every ttl/3` },
  { name: 'raw', settings: 'SET NX PX; compare-and-delete EVALSHA; no renewal' },
];

/**
 * 100,000 locks on one Redis shared with others: how fast they are taken and given back at
 * concurrency 500 against the raw floor, and what holding them renewed every second costs
 * Redis, a neighbour on it, and this process.
 */
export async function runHeldAtScale(context: ScenarioContext): Promise<ScenarioResult> {
  const { options, log } = context;
  const count = options.durations.scaleLocks;
  // Compiled code for both paths before the first measured run (see warmUp in context.ts).
  for (const { name } of CONTENDERS) await takeAndGive(context, name, count / 5);
  const bulk = await runCell(
    `${count} locks, concurrency ${BULK_CONCURRENCY}, ttl ${BULK_TTL_MS} ms`,
    { locks: count, concurrency: BULK_CONCURRENCY, ttlMs: BULK_TTL_MS },
    CONTENDERS,
    options.reps[7],
    async ({ name }) => ({ figures: await takeAndGive(context, name, count) }),
    log,
  );
  const held = [];
  // The stress (renewal every second), then the defaults (every 10 s).
  for (const [ttl, holdMs] of [
    [SCALE_TTL_MS, options.durations.scaleHoldMs],
    [BULK_TTL_MS, options.durations.scaleHoldMs / 2],
  ] as const) {
    held.push(
      await runCell(
        `${count} held, ttl ${ttl} ms, ${holdMs / 1000} s`,
        { locks: count, ttlMs: ttl, holdMs },
        CONTENDERS.slice(0, 1),
        1,
        async () => ({ figures: await holdAtScale(context, ttl, holdMs) }),
        log,
      ),
    );
  }
  const ratios = withPairedRatio(
    withPairedRatio(bulk, 'raw', 'acquirePerSec', 'acquireToRaw'),
    'raw',
    'releasePerSec',
    'releaseToRaw',
  );
  return {
    id: 7,
    title: `${count.toLocaleString('en-US')} held locks on a shared Redis`,
    cells: [ratios, ...held],
    notes: [
      `Bulk: every lock taken by ${BULK_CONCURRENCY} concurrent callers on one connection, then every lock released the same way; the library and raw alternate, each on a fresh connection, an empty server and a collected heap. The lease is the library's default, ${BULK_TTL_MS} ms, so no renewal runs during the cell (raw renews nothing); renewal at scale is the next cell's subject.`,
      `Held: the same locks kept for the whole window by the watchdog (every ttl/3). Over 2 ms: commands that ran ${COMMAND_BUDGET_US} µs or longer (SLOWLOG, the bench's own probes left out); slowest: the slowest command of ours logged (floor ${COMMAND_BUDGET_US / 2} µs, 0 if none). Stalls: constant-time commands (a GET or PEXPIRE inside a script, a neighbour's TIME) logged at the floor or more, which only a held-up Redis (its host's CPU) explains; they land on whatever command runs. Host steal: CPU time the hypervisor gave other guests over the window (/proc/stat, all CPUs, 10 ms steps). Lag: monitorEventLoopDelay in the holding process, resolution 10 ms. Heap per lock: after a full GC, with the locks held − before, over the locks; growth: end of the window − start. Redis per lock: INFO used_memory, held − before, over the locks (a mutex key with its expiry). Neighbour: another process on the same server sending one TIME every 5 ms, first for 5 s alone (before the locks are taken), then throughout the window; wait: from its send to the server time in the reply (how long Redis kept it waiting), round trip: as the neighbour saw it (its own scheduling included). CPU: the holding process's CPU time (all threads) and Redis's (INFO cpu) over the window; per renewal: the process's over the PEXPIREs run.`,
    ],
  };
}

/** Takes `count` keys at the bulk concurrency on a fresh connection, then releases them all. */
async function takeAndGive({ target }: ScenarioContext, name: string, count: number) {
  await target.admin.flushall();
  // The run before left 100,000 locks' garbage: collected now, or this run pays for it.
  await collectGarbage();
  const locker = await (name === 'raw' ? rawLocker : libraryLocker)(target.url);
  try {
    const taken = await takeAll(locker, 'bulk', count, BULK_TTL_MS, BULK_CONCURRENCY);
    const releasePerSec = await releaseAll(taken.releases, BULK_CONCURRENCY);
    return { acquirePerSec: taken.perSec, releasePerSec };
  } finally {
    await locker.close();
  }
}
