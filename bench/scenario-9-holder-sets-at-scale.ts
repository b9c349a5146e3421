import type { ScenarioContext } from './context.js';
import { runCell, type ScenarioResult } from './results.js';
import { COMMAND_BUDGET_US } from './scale-held-locks.js';
import { holderSetsAtScale } from './scale-holder-sets.js';

/** A semaphore of limit 1,000 with 5,000 holders, then 1,000 readers on one key. */
export async function runHolderSetsAtScale(context: ScenarioContext): Promise<ScenarioResult> {
  const { options, log } = context;
  const cell = await runCell(
    `semaphore limit 1000 × 5000 holders; 1000 readers; ${options.durations.holderSetMs / 1000} s each`,
    { holdMs: options.durations.holderSetMs },
    [{ name: 'library', settings: 'acquire(key, { limit: 1000 } or { mode: "read" }, wait 30 s)' }],
    1,
    async () => ({ figures: await holderSetsAtScale(context) }),
    log,
  );
  return {
    id: 9,
    title: 'Large holder sets',
    cells: [cell],
    notes: [
      `Each holder takes its place, keeps it 1 ms and gives it back, in a loop, over two connections of this process. Over 2 ms: commands that ran ${COMMAND_BUDGET_US} µs or longer (SLOWLOG); slowest: the slowest logged (floor ${COMMAND_BUDGET_US / 2} µs, 0 if none). Redis per holder and per reader: MEMORY USAGE of a holder set with 1,000 of them, over 1,000.`,
    ],
  };
}
