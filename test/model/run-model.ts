/**
 * `npm run test:model`: the model-based checker over every target, within its CI budget.
 * `-- --long [--minutes N]` runs for N minutes (default 30), going on after a failure;
 * `-- --target redis --seed N [--path P]` replays one run; `-- --client node-redis` (or glide)
 * runs the Redis targets through that client library. `--ignore-kind K` (repeatable) sets
 * aside the violations of one kind (see failure-kinds.ts; `kind*` for every kind it begins), as
 * the mutant suite does for the defects the unmutated code already has; `--no-shrink` reports a
 * failure as drawn; `--stop-at-first` ends at the first failure; `--ci-share` gives each target
 * its share of the CI budget even when run alone (the mutant suite's per-target runs);
 * `--budget-seconds N` is a CI run of N seconds in all.
 */
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { cliIsFresh } from './admin-cli.js';
import { ChildPool } from './child-service.js';
import { lineKind } from './failure-kinds.js';
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
    'ignore-kind': { type: 'string', multiple: true },
    'no-shrink': { type: 'boolean', default: false },
    'stop-at-first': { type: 'boolean', default: false },
    'ci-share': { type: 'boolean', default: false },
    // A CI run with a budget of its own, in seconds (CI's runs through other client libraries).
    'budget-seconds': { type: 'string' },
  },
});

/** Whether a violation of `kind` is set aside by one of `--ignore-kind`'s patterns. */
function ignoredBy(patterns: readonly string[]): (kind: string) => boolean {
  return (kind) =>
    patterns.some((p) => (p.endsWith('*') ? kind.startsWith(p.slice(0, -1)) : kind === p));
}

/**
 * Share of the budget per target: Redis has every fault and move and child processes; the
 * Cluster pays its startup and has no restart; the memory store has the fewest moves.
 */
const SHARE: Record<string, number> = { redis: 0.55, cluster: 0.3, memory: 0.15 };
/**
 * CI: 6 minutes of runs and shrinking. With the servers' startup and each target's last run,
 * `npm run test:model` takes 6–7 minutes on a 2-core machine (docs/correctness.md).
 */
const CI_BUDGET_MS = 360_000;

// A run's world hears the rejections nobody handled while it is open; one between runs (a
// connection closed after its run) is reported here, never allowed to end the checker.
process.on('unhandledRejection', (reason) => {
  console.error(`unhandled rejection between runs: ${String(reason)}`);
});

async function main(): Promise<number> {
  // Read by the services, here and in their child processes, as they make their stores.
  if (values.client !== undefined) process.env.LOCK_TEST_CLIENT = values.client;
  const minutes =
    values.minutes !== undefined ? Number(values.minutes) : values.long ? 30 : undefined;
  const ciBudgetMs =
    values['budget-seconds'] !== undefined
      ? Number(values['budget-seconds']) * 1_000
      : CI_BUDGET_MS;
  const budgetMs = minutes !== undefined ? minutes * 60_000 : ciBudgetMs;
  const targets = values.target?.flatMap((name) => name.split(',')).map(targetNamed) ?? TARGETS;
  const firstSeed = values.seed !== undefined ? Number(values.seed) : Date.now() % 1_000_000_000;
  const shares = values['ci-share']
    ? 1
    : targets.reduce((sum, target) => sum + (SHARE[target.name] ?? 0.3), 0);
  const ignored = ignoredBy(values['ignore-kind'] ?? []);
  if (!cliIsFresh()) {
    // The admin CLI runs as the package ships it: built JavaScript, from these sources.
    console.log('building dist/ for the admin CLI…');
    try {
      execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
    } catch (error) {
      // tsc writes the JavaScript whatever its type checks say (a mutant may leave an unused
      // name): the CLI runs if it was written.
      if (!cliIsFresh()) throw error;
    }
  }
  const started = performance.now();
  const reports: SessionReport[] = [];
  for (const target of targets) {
    const backend = await target.start();
    const pool = new ChildPool();
    if (target.children) pool.warm(2);
    try {
      const report = await runSession(target, backend, pool, {
        firstSeed,
        budgetMs: (budgetMs * (SHARE[target.name] ?? 0.3)) / shares,
        shrinkMs: values['no-shrink'] ? 0 : minutes !== undefined ? 180_000 : 30_000,
        hardBudget: minutes === undefined,
        maxCommands: values.commands !== undefined ? Number(values.commands) : 40,
        path: values.path,
        keepGoing: values['keep-going'] || values.long || minutes !== undefined,
        onFailure: printFailure,
        keep: (line) => !ignored(lineKind(line)),
      });
      reports.push(report);
      const [first, last] = [report.seeds[0], report.seeds.at(-1)];
      console.log(
        `${target.name}: seeds ${first}..${last} (${report.runs} runs, ${report.steps} steps), ` +
          `${report.failures.length} failed`,
      );
      if (values['stop-at-first'] && report.failures.length > 0) break;
    } finally {
      await pool.close();
      await backend.stop();
    }
  }
  const failed = reports.reduce((sum, report) => sum + report.failures.length, 0);
  const runs = reports.reduce((sum, report) => sum + report.runs, 0);
  const took = Math.round((performance.now() - started) / 1000);
  console.log(`${runs - failed} passed, ${failed} failed (${took} s)`);
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
