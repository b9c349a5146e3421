/**
 * Runs one target: one fast-check run per seed, seeds in a row until the time budget is spent.
 * A failing run shrinks (for at most `shrinkMs`) and is returned with everything a replay needs.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { revocable } from './acl-user.js';
import { failureKind } from './failure-kinds.js';
import { commandsArb, setupArb, Step, type ModelState } from './model-commands.js';
import type { Backend } from './model-backend.js';
import type { ChildPool } from './child-service.js';
import type { Op, RunSetup } from './model-ops.js';
import { serviceFactory, type Target } from './model-targets.js';
import type { History } from './model-history.js';
import { World, type ViolationFilter } from './model-world.js';

export interface SessionOptions {
  readonly firstSeed: number;
  readonly budgetMs: number;
  readonly shrinkMs: number;
  /** Shrinking stops at the budget's end too (CI), instead of taking `shrinkMs` past it. */
  readonly hardBudget?: boolean;
  readonly maxCommands: number;
  /** Replays one run: a seed and the path fast-check printed. */
  readonly path?: string;
  /** Goes on with the next seed after a failure (long runs hunting several defects). */
  readonly keepGoing?: boolean;
  /** Hears each failure as soon as it has shrunk (a long run prints them as they come). */
  readonly onFailure?: (failure: Failure) => void;
  /** Keeps the violations it judges (the others are set aside: a known defect's kinds). */
  readonly keep?: ViolationFilter;
}

export interface Failure {
  /** Which invariant it broke (failure-kinds.ts). */
  readonly kind: string;
  /** False for a kind this session had already shrunk: the run as drawn. */
  readonly shrunk: boolean;
  readonly target: string;
  readonly seed: number;
  readonly path: string;
  readonly setup: RunSetup;
  readonly ops: readonly Op[];
  readonly sequence: string;
  readonly error: string;
}

export interface SessionReport {
  readonly target: string;
  readonly seeds: readonly number[];
  runs: number;
  steps: number;
  readonly failures: Failure[];
}

/**
 * With MODEL_DUMP=<dir>, a failing run's whole history is written there as JSON (times in ms
 * since the run began), for reading what led to a violation.
 */
function dumpHistory(history: History, label: string): void {
  const dir = process.env.MODEL_DUMP;
  if (!dir) return;
  const ms = (value: unknown): unknown =>
    typeof value === 'bigint' || (typeof value === 'string' && /^\d{12,}$/.test(value))
      ? Math.round(Number(BigInt(value) - history.started) / 1e4) / 100
      : value;
  const text = JSON.stringify(
    { ...history, sections: [...history.sections.values()] },
    (_, value: unknown) => ms(value),
    1,
  );
  const file = join(dir, `history-${label}.json`);
  writeFileSync(file, text);
  console.error(`history of the failing run: ${file}`);
}

/** A run that neither ends nor fails within this long has hung: a liveness failure too. */
const RUN_LIMIT_MS = 90_000;

function timeout(ms: number): { promise: Promise<never>; clear: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`run did not end within ${ms} ms`)), ms);
  });
  return { promise, clear: () => clearTimeout(timer) };
}

/** Runs `steps` against a fresh world on `backend` and judges it; throws on a violation. */
export async function runSteps(
  backend: Backend,
  pool: ChildPool,
  setup: RunSetup,
  steps: Iterable<Step>,
  keep?: ViolationFilter,
  label = String(Date.now()),
): Promise<void> {
  const world = await World.open(backend, setup, serviceFactory(backend, pool), keep);
  const limit = timeout(RUN_LIMIT_MS);
  let failure: unknown;
  try {
    const model: ModelState = {
      services: setup.services.length,
      inChild: setup.services.map((s) => s.child),
      dead: new Set(),
    };
    const run = async (): Promise<void> => {
      await fc.asyncModelRun(() => ({ model, real: world }), steps);
      await world.finish();
    };
    await Promise.race([run(), limit.promise]);
  } catch (error) {
    dumpHistory(world.history, label);
    failure = error;
  }
  limit.clear();
  const before = world.history.violations.length;
  await world.close();
  if (failure !== undefined) throw failure;
  const closing = world.closingViolations(before);
  if (closing.length > 0) throw new Error(`invariant broken:\n  ${closing.join('\n  ')}`);
}

export async function runSession(
  target: Target,
  backend: Backend,
  pool: ChildPool,
  options: SessionOptions,
): Promise<SessionReport> {
  const report: SessionReport = { target: target.name, seeds: [], runs: 0, steps: 0, failures: [] };
  const started = performance.now();
  const seeds = report.seeds as number[];
  const shrunkKinds = new Set<string>();
  for (let seed = options.firstSeed; ; seed++) {
    // No run starts that would likely end past the budget (an average run's length left).
    const elapsed = performance.now() - started;
    if (seeds.length > 0 && elapsed + elapsed / seeds.length >= options.budgetMs) break;
    seeds.push(seed);
    let shrinkUntil = Infinity;
    let executions = 0;
    let kind: string | undefined;
    const moves = {
      space: target.keys,
      can: backend.can,
      children: target.children,
      revocable: backend.can.includes('acl') ? revocable(target.name === 'cluster') : [],
    };
    const property = fc.asyncProperty(
      setupArb(target.children),
      commandsArb(moves, options.maxCommands),
      async (setup, commands) => {
        // Past the shrink budget every candidate "passes": fast-check keeps the smallest failure.
        if (++executions > 1 && performance.now() > shrinkUntil) return true;
        const stepsBefore = Step.executed;
        try {
          const label = `${target.name}-${seed}-${executions}`;
          await runSteps(backend, pool, setup, commands as Iterable<Step>, options.keep, label);
        } catch (error) {
          if (shrinkUntil === Infinity) {
            kind = failureKind(error instanceof Error ? error.message : String(error));
            // A kind already shrunk in this session is counted, not shrunk again.
            const again = options.keepGoing && shrunkKinds.has(kind);
            // Within the budget's end too when the budget is a hard limit (CI).
            const budgetEnd = options.hardBudget ? started + options.budgetMs : Infinity;
            shrinkUntil = again ? 0 : Math.min(performance.now() + options.shrinkMs, budgetEnd);
          }
          throw error;
        } finally {
          if (executions === 1) {
            report.runs++;
            report.steps += Step.executed - stepsBefore;
          }
        }
      },
    );
    const details = await fc.check(property, {
      seed,
      numRuns: 1,
      path: options.path,
      endOnFailure: false,
    });
    if (details.failed && details.counterexample) {
      const [setup, commands] = details.counterexample;
      const failure: Failure = {
        kind: kind ?? 'unknown',
        shrunk: !shrunkKinds.has(kind ?? 'unknown'),
        target: target.name,
        seed,
        path: details.counterexamplePath ?? '',
        setup,
        ops: [...commands]
          .map((step) => ((step as { cmd?: Step }).cmd ?? (step as Step)).op)
          .filter((op) => !('svc' in op) || op.svc < setup.services.length),
        sequence: String(commands),
        error: String(
          details.errorInstance instanceof Error
            ? details.errorInstance.message
            : details.errorInstance,
        ),
      };
      report.failures.push(failure);
      shrunkKinds.add(failure.kind);
      options.onFailure?.(failure);
      if (!options.keepGoing) break;
    }
    if (options.path) break;
  }
  return report;
}
