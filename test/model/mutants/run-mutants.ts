/**
 * `npm run test:mutants`: the model checker's power, measured. Each mutant of mutants.ts is
 * applied, one at a time, to a scratch copy of the repository (the working tree is never
 * touched), and the checker runs on it at its CI budget, on the targets that run the mutated
 * code (each with its share of the CI budget), until its first failure. A mutant is caught when
 * the checker fails on it; one whose fragment is not found exactly once "does not apply", and
 * fails the suite. The unmutated code runs first: the kinds of the defects it already has
 * (KNOWN_DEFECT_KINDS) are set aside for every mutant, and it must run clean without them.
 *
 *   npm run test:mutants -- [--only id,id] [--seed N] [--no-baseline] [--out results.json]
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { MUTANTS, type Mutant } from './mutants.js';

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    seed: { type: 'string' },
    'no-baseline': { type: 'boolean', default: false },
    out: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});

/**
 * The kinds of violation the unmutated lib/ already shows, set aside while mutants are scored: a
 * mutant caught only by one of them would not be told apart from the defect. None today; the
 * baseline run must be clean.
 */
const KNOWN_DEFECT_KINDS: readonly string[] = [];

/** The checker's CI budget (run-model.ts), and past it: startup, a last run, building dist/. */
const CI_MS = 360_000;
const OVERRUN_MS = 240_000;

interface Outcome {
  readonly id: string;
  readonly kind: string;
  readonly targets: readonly string[];
  readonly verdict: 'caught' | 'missed' | 'does not apply' | 'error';
  readonly seed: number;
  readonly failure?: string;
  readonly seconds: number;
}

const ROOT = resolve('.');

/** A copy of the repository's files (tracked and new, not ignored), node_modules linked. */
function scratchCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mutants-'));
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ROOT })
    .toString()
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(ROOT, file), join(dir, file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** The fragment's place in `text`, or why the mutant does not apply. */
function applied(mutant: Mutant, text: string): string {
  const first = text.indexOf(mutant.find);
  if (first < 0) throw new Error(`${mutant.file} no longer contains: ${mutant.find}`);
  if (text.indexOf(mutant.find, first + 1) >= 0)
    throw new Error(`${mutant.file} contains more than once: ${mutant.find}`);
  return text.slice(0, first) + mutant.replace + text.slice(first + mutant.find.length);
}

/** Runs the checker in `dir`; resolves with its exit code and output. */
function check(
  dir: string,
  targets: readonly string[],
  seed: number,
): Promise<{ code: number; output: string }> {
  const args = ['--import', 'tsx', 'test/model/run-model.ts', '--target', targets.join(','), '--ci-share', '--stop-at-first', '--no-shrink', '--seed', String(seed), ...KNOWN_DEFECT_KINDS.flatMap((kind) => ['--ignore-kind', kind])]; // prettier-ignore
  return new Promise((done) => {
    const child = spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const limit = setTimeout(() => child.kill('SIGKILL'), CI_MS + OVERRUN_MS);
    child.on('exit', (code) => {
      clearTimeout(limit);
      done({ code: code ?? 2, output });
    });
  });
}

async function judge(dir: string, mutant: Mutant, seed: number): Promise<Outcome> {
  const started = performance.now();
  const file = join(dir, mutant.file);
  const original = readFileSync(join(ROOT, mutant.file), 'utf8');
  const base = { id: mutant.id, kind: mutant.kind, targets: mutant.targets, seed };
  let text: string;
  try {
    text = applied(mutant, original);
  } catch (error) {
    return { ...base, verdict: 'does not apply', failure: String(error), seconds: 0 };
  }
  writeFileSync(file, text);
  try {
    const { code, output } = await check(dir, mutant.targets, seed);
    const seconds = Math.round((performance.now() - started) / 1000);
    const failure = /^FAIL .*$/m.exec(output)?.[0];
    if (code === 1 && failure) return { ...base, verdict: 'caught', failure, seconds };
    if (code === 0) return { ...base, verdict: 'missed', seconds };
    return { ...base, verdict: 'error', failure: output.slice(-2_000), seconds };
  } finally {
    writeFileSync(file, original);
  }
}

async function main(): Promise<number> {
  const only = values.only?.split(',');
  const mutants = only ? MUTANTS.filter((m) => only.includes(m.id)) : MUTANTS;
  const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 1_000_000_000;
  const dir = scratchCopy();
  console.log(`mutant suite: ${mutants.length} mutants, seed ${seed}, scratch copy ${dir}`);
  try {
    if (!values['no-baseline']) {
      const { code, output } = await check(dir, ['redis', 'cluster', 'memory'], seed);
      console.log(
        `baseline (unmutated, known defect kinds set aside): ${code === 0 ? 'clean' : 'FAILED'}`,
      );
      if (code !== 0) {
        console.log(output.slice(-4_000));
        return 2;
      }
    }
    const outcomes: Outcome[] = [];
    for (const mutant of mutants) {
      const outcome = await judge(dir, mutant, seed);
      outcomes.push(outcome);
      console.log(`${outcome.verdict.padEnd(14)} ${mutant.id} (${mutant.targets.join(',')}, ${outcome.seconds} s)${outcome.failure && outcome.verdict === 'caught' ? `\n               ${outcome.failure}` : ''}`); // prettier-ignore
      if (outcome.verdict !== 'caught' && outcome.failure) console.log(outcome.failure);
    }
    const count = (verdict: Outcome['verdict']): number => outcomes.filter((o) => o.verdict === verdict).length; // prettier-ignore
    console.log(
      `caught ${count('caught')} of ${outcomes.length} (missed ${count('missed')}, errors ${count('error')}, not applying ${count('does not apply')}); seed ${seed}`,
    );
    if (values.out) writeFileSync(values.out, JSON.stringify({ seed, outcomes }, null, 2));
    return count('does not apply') + count('error') > 0 ? 1 : 0;
  } finally {
    if (!values.keep) rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
