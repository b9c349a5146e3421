/**
 * `npm run test:model`: the model-based checker over every target, within a CI budget of under
 * 2 minutes in all. `-- --long [--minutes N]` runs for N minutes (default 30), going on after a
 * failure; `-- --target redis --seed N [--path P]` replays one run; `-- --client node-redis`
 * (or glide) runs the Redis targets through that client library.
 */
import { parseArgs } from 'node:util';
import { ChildPool } from './child-service.js';
import { printFailure } from './model-report.js';
import { runSession, type SessionReport } from './model-session.js';
import { TARGETS, targetNamed } from './model-targets.js';

const { values } = parseArgs({
  options: {
    long: { type: 'boolean', default: false },
    minutes: { type: 'string' },
    seed: { type: 'string' },
    path: { type: 'string' },
    target: { type: 'string', multiple: true },
    // The Redis targets' client library: ioredis (default), node-redis or glide.
    client: { type: 'string' },
    commands: { type: 'string' },
    'keep-going': { type: 'boolean', default: false },
  },
});

/** Share of the budget per target: Redis has the most faults, the Cluster pays its startup. */
const SHARE: Record<string, number> = { redis: 0.5, cluster: 0.3, memory: 0.2 };
/**
 * CI: 50 s of runs and shrinking, leaving room under 2 minutes for the servers' startup and
 * each target's last run (the whole CI must stay under 15 minutes).
 */
const CI_BUDGET_MS = 50_000;

async function main(): Promise<number> {
  // Read by the services, here and in their child processes, as they make their stores.
  if (values.client !== undefined) process.env.LOCK_TEST_CLIENT = values.client;
  const minutes =
    values.minutes !== undefined ? Number(values.minutes) : values.long ? 30 : undefined;
  const budgetMs = minutes !== undefined ? minutes * 60_000 : CI_BUDGET_MS;
  const targets = values.target?.flatMap((name) => name.split(',')).map(targetNamed) ?? TARGETS;
  const firstSeed = values.seed !== undefined ? Number(values.seed) : Date.now() % 1_000_000_000;
  const shares = targets.reduce((sum, target) => sum + (SHARE[target.name] ?? 0.3), 0);
  const reports: SessionReport[] = [];
  for (const target of targets) {
    const backend = await target.start();
    const pool = new ChildPool();
    if (target.children) pool.warm(2);
    try {
      const report = await runSession(target, backend, pool, {
        firstSeed,
        budgetMs: (budgetMs * (SHARE[target.name] ?? 0.3)) / shares,
        shrinkMs: minutes !== undefined ? 180_000 : 30_000,
        hardBudget: minutes === undefined,
        maxCommands: values.commands !== undefined ? Number(values.commands) : 40,
        path: values.path,
        keepGoing: values['keep-going'] || values.long || minutes !== undefined,
        onFailure: printFailure,
      });
      reports.push(report);
      const [first, last] = [report.seeds[0], report.seeds.at(-1)];
      console.log(
        `${target.name}: seeds ${first}..${last} (${report.runs} runs, ${report.steps} steps), ` +
          `${report.failures.length} failed`,
      );
    } finally {
      await pool.close();
      await backend.stop();
    }
  }
  const failed = reports.reduce((sum, report) => sum + report.failures.length, 0);
  const runs = reports.reduce((sum, report) => sum + report.runs, 0);
  console.log(`${runs - failed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
