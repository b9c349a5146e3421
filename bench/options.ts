import {
  BENCH_CLIENTS,
  LOCK_CONTENDERS,
  type BenchClient,
  type LockContenderName,
} from './contenders/contender.js';

/** Command-line flags and the durations they imply. */
export interface BenchOptions {
  readonly quick: boolean;
  readonly json: boolean;
  readonly scenarios: readonly number[];
  /** The client libraries whose cells scenarios 1, 2 and 4 run (the others run on ioredis). */
  readonly clients: readonly BenchClient[];
  /** The lock contenders of scenarios 1-4; scenario 1 keeps raw, the baseline of its ratios. */
  readonly contenders: readonly LockContenderName[];
  /** Scenario 10: the directory of the earlier build it runs beside this one (see hand-off-builds.ts). */
  readonly baseline: string;
  /** Repetitions per cell, by scenario number. */
  readonly reps: Readonly<Record<number, number>>;
  /** Write bench/RESULTS.md (full runs of every scenario only, unless forced). */
  readonly writeResults: boolean;
  readonly durations: Durations;
}

export interface Durations {
  /** Per contender, before a scenario's first measured run. */
  readonly warmUpMs: number;
  readonly uncontendedMs: number;
  readonly hotKeyMs: number;
  readonly multiProcessMs: number;
  readonly heldLocksMs: number;
  readonly heldLocks: number;
  /** Scenario 7: locks taken and held at once, and how long they are held. */
  readonly scaleLocks: number;
  readonly scaleHoldMs: number;
  /** Scenario 8: busy keys handed over to a waiter in another process. */
  readonly handOverKeys: number;
  /** Scenario 8: the window the releases are spread over in its first cell. */
  readonly handOverSpreadMs: number;
  /** Scenario 9: how long each large holder set churns. */
  readonly holderSetMs: number;
  /** Scenario 10: measured hand-offs per build and repetition. */
  readonly handOffs: number;
}

/**
 * The machine is shared and its load swings within seconds: many short repetitions, rather
 * than a few long ones, let those swings fall on every contender alike and the median drop
 * them. Scenario 1's ratios to raw swing most (500 ms per contender, in slices) and sit near
 * their target, so it takes the most. Scenario 5 is a 15 s steady state, where three are enough.
 */
const FULL_REPS = { 1: 15, 2: 5, 3: 5, 4: 5, 5: 3, 6: 5, 7: 5, 8: 3, 9: 1, 10: 3 };
const QUICK_REPS = { 1: 2, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 7: 1, 8: 1, 9: 1, 10: 1 };
const SCENARIOS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
/** Where scenario 10 finds (or makes) the build of the code it compares with. */
export const DEFAULT_BASELINE = '/tmp/bench-407040a';

const FULL: Durations = {
  warmUpMs: 1_000,
  uncontendedMs: 500,
  hotKeyMs: 2_000,
  multiProcessMs: 2_000,
  heldLocksMs: 15_000,
  heldLocks: 10_000,
  scaleLocks: 100_000,
  scaleHoldMs: 60_000,
  handOverKeys: 10_000,
  handOverSpreadMs: 5_000,
  holderSetMs: 5_000,
  handOffs: 120,
};

const QUICK: Durations = {
  warmUpMs: 250,
  uncontendedMs: 300,
  hotKeyMs: 500,
  multiProcessMs: 800,
  heldLocksMs: 3_000,
  heldLocks: 10_000,
  scaleLocks: 20_000,
  scaleHoldMs: 5_000,
  handOverKeys: 2_000,
  handOverSpreadMs: 1_000,
  holderSetMs: 2_000,
  handOffs: 40,
};

export const USAGE = `Usage: npm run bench -- [--quick] [--json] [--scenario N]... [--client NAME]...
       [--contender NAME]... [--reps N] [--baseline DIR] [--write-results]
  --quick           a few minutes: 1-2 repetitions, short cells (full run: ~30 min)
  --json            print the results as JSON on stdout (tables and progress go to stderr)
  --scenario N      run only scenario N (1-10); repeat the flag for several
  --client NAME     run scenarios 1, 2 and 4 on this client only (${BENCH_CLIENTS.join(', ')});
                    repeat the flag for several (default: all three)
  --contender NAME  run only this lock in scenarios 1-4 (${LOCK_CONTENDERS.join(', ')}); repeat
                    the flag for several; scenario 1 keeps raw, the baseline of its ratios
  --reps N          repetitions per cell in every scenario (default by scenario 1-10: 15, 5, 5, 5,
                    3, 5, 5, 3, 1, 3; quick: 2, then 1; the 60 s hold of scenario 7 runs once)
  --baseline DIR    scenario 10's build of commit 407040a (default ${DEFAULT_BASELINE}; made there
                    from git if it has no dist/)
  --write-results   write bench/RESULTS.md even for a quick or partial run
  REDIS_URL=...     use that server instead of starting a redis-server`;

export function parseOptions(argv: readonly string[]): BenchOptions {
  let quick = false;
  let json = false;
  let reps: number | undefined;
  let forceWrite = false;
  let baseline = DEFAULT_BASELINE;
  const scenarios: number[] = [];
  const clients: BenchClient[] = [];
  const contenders: LockContenderName[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--quick') quick = true;
    else if (flag === '--json') json = true;
    else if (flag === '--write-results') forceWrite = true;
    else if (flag === '--scenario')
      scenarios.push(parseWhole(argv[++i], flag, 1, SCENARIOS.length));
    else if (flag === '--reps') reps = parseWhole(argv[++i], flag, 1, 50);
    else if (flag === '--client') clients.push(parseName(argv[++i], flag, BENCH_CLIENTS));
    else if (flag === '--contender') contenders.push(parseName(argv[++i], flag, LOCK_CONTENDERS));
    else if (flag === '--baseline') baseline = argv[++i] ?? fail(`${flag} takes a directory.`);
    else if (flag === '--help' || flag === '-h') fail('');
    else fail(`Unknown flag "${flag}".`);
  }
  const all = scenarios.length === 0;
  return {
    quick,
    json,
    scenarios: all ? SCENARIOS : [...new Set(scenarios)].sort((a, b) => a - b),
    clients: clients.length
      ? BENCH_CLIENTS.filter((name) => clients.includes(name))
      : BENCH_CLIENTS,
    contenders: contenders.length
      ? LOCK_CONTENDERS.filter((name) => contenders.includes(name))
      : LOCK_CONTENDERS,
    baseline,
    reps: reps
      ? Object.fromEntries(SCENARIOS.map((id) => [id, reps]))
      : quick
        ? QUICK_REPS
        : FULL_REPS,
    // A full run is every scenario, client and contender.
    writeResults: forceWrite || (!quick && all && !clients.length && !contenders.length),
    durations: quick ? QUICK : FULL,
  };
}

function parseWhole(text: string | undefined, flag: string, min: number, max: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max)
    fail(`${flag} takes a whole number from ${min} to ${max}, got "${text ?? ''}".`);
  return value;
}

function parseName<T extends string>(
  text: string | undefined,
  flag: string,
  names: readonly T[],
): T {
  if (!names.includes(text as T))
    fail(`${flag} takes one of ${names.join(', ')}, got "${text ?? ''}".`);
  return text as T;
}

function fail(message: string): never {
  if (message) console.error(message);
  console.error(USAGE);
  process.exit(message ? 2 : 0);
}
