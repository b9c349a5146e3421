import { combineReps, rotation, type Figures } from './aggregate.js';
import { median } from './stats.js';

/** One contender in one cell: figures combined over repetitions, and each repetition's own. */
/** One target of issue 6 (or a measured anchor), checked against the combined figures. */
export interface TargetCheck {
  readonly scenario: number;
  readonly target: string;
  readonly measured: string;
  /** undefined: the scenario did not run. */
  readonly pass: boolean | undefined;
  /** Anchors describe the peers on this machine; they are context, not the library's targets. */
  readonly anchor?: boolean;
}

export interface ContenderResult {
  readonly contender: string;
  readonly settings: string;
  readonly figures: Figures;
  readonly reps: readonly Figures[];
  /** Server commands per lock by name, largest first (last repetition). */
  readonly commandMix?: string;
}

export interface CellResult {
  readonly cell: string;
  readonly params: Record<string, number>;
  /** The client library the cell's locks ran on, where the scenario runs on several. */
  readonly client?: string;
  readonly results: readonly ContenderResult[];
}

export interface ScenarioResult {
  readonly id: number;
  readonly title: string;
  readonly cells: readonly CellResult[];
  readonly notes: readonly string[];
}

export interface RunOutcome {
  readonly figures: Figures;
  readonly commandMix?: string;
}

export interface Runnable {
  readonly name: string;
  readonly settings: string;
}

type RunListener = (cell: string, done: number, total: number) => void;
let runListener: RunListener | undefined;

/** Tells `listener` of each finished run of a cell (the bench's status line; one at a time). */
export function onCellRun(listener: RunListener | undefined): void {
  runListener = listener;
}

/**
 * Runs one cell: every contender once per repetition, in an order rotated each repetition, so
 * that drift in machine load falls on all of them alike. Then combines the repetitions.
 */
export function runCell<C extends Runnable>(
  cell: string,
  params: Record<string, number>,
  contenders: readonly C[],
  reps: number,
  run: (contender: C, rep: number) => Promise<RunOutcome>,
  log: (line: string) => void,
): Promise<CellResult> {
  const plan = { reps, slices: 1, finish: ([outcome]: RunOutcome[]) => outcome };
  return runSlicedCell(cell, params, contenders, plan, run, log);
}

/** How `runSlicedCell` splits a cell, and how it turns a repetition's slices into figures. */
export interface SlicePlan<S> {
  readonly reps: number;
  /** Runs of each contender per repetition, interleaved with the others'. */
  readonly slices: number;
  /** One contender's slices of one repetition as that repetition's outcome. */
  readonly finish: (slices: S[]) => RunOutcome;
}

/**
 * Runs one cell as `runCell` does, but each repetition is `slices` short runs per contender,
 * the contenders taking turns (rotated every turn), so that the machine's swings within a
 * repetition, which last from a fraction of a second to seconds here, fall on all of them alike.
 */
export async function runSlicedCell<C extends Runnable, S>(
  cell: string,
  params: Record<string, number>,
  contenders: readonly C[],
  { reps, slices, finish }: SlicePlan<S>,
  run: (contender: C, rep: number) => Promise<S>,
  log: (line: string) => void,
): Promise<CellResult> {
  const outcomes = new Map<C, RunOutcome[]>(contenders.map((contender) => [contender, []]));
  let done = 0;
  for (let rep = 0; rep < reps; rep++) {
    const taken = new Map<C, S[]>(contenders.map((contender) => [contender, []]));
    for (let slice = 0; slice < slices; slice++) {
      for (const contender of rotation(contenders, rep * slices + slice)) {
        taken.get(contender)!.push(await run(contender, rep));
      }
    }
    for (const contender of rotation(contenders, rep)) {
      const outcome = finish(taken.get(contender)!);
      outcomes.get(contender)!.push(outcome);
      log(`  ${cell} rep ${rep + 1}/${reps} ${contender.name}: ${headline(outcome.figures)}`);
      runListener?.(cell, ++done, reps * contenders.length);
    }
  }
  const results = contenders.map((contender) => {
    const runs = outcomes.get(contender)!;
    const repFigures = runs.map((outcome) => outcome.figures);
    return {
      contender: contender.name,
      settings: contender.settings,
      figures: combineReps(repFigures),
      reps: repFigures,
      commandMix: runs.at(-1)?.commandMix,
    };
  });
  return { cell, params, results };
}

function headline(figures: Figures): string {
  return Object.entries(figures)
    .slice(0, 4)
    .map(([name, value]) => `${name}=${Number.isInteger(value) ? value : value.toFixed(2)}`)
    .join(' ');
}

/**
 * Adds `name`: each contender's `figure` over the baseline's, as the median of per-repetition
 * ratios (the runs of one repetition are adjacent in time, so they share the machine's load),
 * with the min and max of those ratios to show the noise the median saw through.
 */
export function withPairedRatio(
  cell: CellResult,
  baseline: string,
  figure: string,
  name: string,
): CellResult {
  const base = cell.results.find((result) => result.contender === baseline);
  if (!base) return cell;
  const results = cell.results.map((result) => {
    const ratios = result.reps.map((figures, rep) => figures[figure] / base.reps[rep][figure]);
    const figures = {
      ...result.figures,
      [name]: median(ratios),
      [`${name}Min`]: Math.min(...ratios),
      [`${name}Max`]: Math.max(...ratios),
    };
    return { ...result, figures };
  });
  return { ...cell, results };
}

/** The client library a cell's locks ran on: ioredis unless the cell says. */
export function clientOf(cell: CellResult): string {
  return cell.client ?? 'ioredis';
}
