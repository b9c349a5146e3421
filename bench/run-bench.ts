/**
 * The benchmark of issues 6 and 43: this library against node-redlock, its fork
 * @sesamecare-oss/redlock, redis-semaphore, redlock-universal and the raw SET NX floor, on one
 * Redis server, on each client library the locks take (ioredis, node-redis, Valkey GLIDE),
 * interleaved and repeated; and its cross-process hand-off beside an earlier build's.
 * `npm run bench -- --help`.
 */
import { fileURLToPath } from 'node:url';
import { writeCharts } from './chart-render.js';
import { buildCharts } from './charts.js';
import { cleanupOnSignals, runCleanup } from './cleanup.js';
import { countClientCommands, verifyScriptCounting } from './command-counter.js';
import type { ScenarioContext } from './context.js';
import { parseOptions } from './options.js';
import { overlapSelfTest } from './overlap-self-test.js';
import { openRedisTarget } from './redis-target.js';
import { writeResultsMarkdown, type ChartLink } from './report-markdown.js';
import { withRedisFirst } from './redis-first.js';
import { renderText, tableRows } from './report-table.js';
import { onCellRun, type ScenarioResult } from './results.js';
import { collectMeta, formatLoad, type RunMeta } from './run-meta.js';
import { runUncontended } from './scenario-1-uncontended.js';
import { runHotKey } from './scenario-2-hot-key.js';
import { runMultiProcess } from './scenario-3-multi-process.js';
import { runFlashSale } from './scenario-4-flash-sale.js';
import { runHeldLocks } from './scenario-5-held-locks.js';
import { runLockFamily } from './scenario-6-lock-family.js';
import { runHeldAtScale } from './scenario-7-held-at-scale.js';
import { runHandOverAtScale } from './scenario-8-hand-over-at-scale.js';
import { runHolderSetsAtScale } from './scenario-9-holder-sets-at-scale.js';
import { runHandOffBuilds } from './scenario-10-hand-off-builds.js';
import { checkTargets } from './targets.js';
import { Progress } from '../tools/progress.js';

const SCENARIOS: Record<number, (context: ScenarioContext) => Promise<ScenarioResult>> = {
  1: runUncontended,
  2: runHotKey,
  3: runMultiProcess,
  4: runFlashSale,
  5: runHeldLocks,
  6: runLockFamily,
  7: runHeldAtScale,
  8: runHandOverAtScale,
  9: runHolderSetsAtScale,
  10: runHandOffBuilds,
};

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const options = parseOptions(argv);
  // Progress and the log go to stderr; with --json, stdout carries only the JSON document.
  // The log's per-run lines already tell the progress in CI logs: no percentages there.
  const progress = new Progress({ stream: process.stderr, plainUpdates: 'none' });
  const log = (line: string): void => progress.log(line);
  const print = options.json ? log : (line: string) => progress.log(line, process.stdout);
  cleanupOnSignals();
  countClientCommands();
  const meta = collectMeta(argv);
  const started = performance.now();
  const target = await openRedisTarget(log);
  try {
    meta.redis = target.version;
    meta.scriptCommandsCounted = await verifyScriptCounting(target.admin);
    meta.selfTest = await overlapSelfTest();
    log(`Redis ${target.version} at ${target.url}; load average ${meta.loadAverageStart}`);
    log(`Overlap self-test: ${meta.selfTest.overlaps} overlaps (must be > 0)`);
    const scenarios: ScenarioResult[] = [];
    for (const [index, id] of options.scenarios.entries()) {
      const step = `Scenario ${id} (${index + 1} of ${options.scenarios.length})`;
      progress.step(`${step}…`);
      onCellRun((cell, done, total) => progress.update(`${step} · ${cell}`, done, total));
      const scenarioStart = performance.now();
      const loadAtStart = formatLoad();
      const context = { target, options, log };
      // The scale scenarios time Redis itself (see redis-first.ts).
      const ran =
        id >= 7 && id <= 9
          ? await withRedisFirst(target, () => runScenario(id, context))
          : await runScenario(id, context);
      const seconds = ((performance.now() - scenarioStart) / 1000).toFixed(0);
      const note = `Took ${seconds} s; load average at its start: ${loadAtStart}.`;
      const result = { ...ran, notes: [...ran.notes, note] };
      log(`Scenario ${id} took ${seconds} s`);
      scenarios.push(result);
      print(`\n${id}. ${result.title}\n${renderText(tableRows(result))}`);
    }
    progress.end();
    meta.loadAverageEnd = formatLoad();
    meta.durationSec = (performance.now() - started) / 1000;
    const targets = checkTargets(scenarios, meta.selfTest.overlaps);
    print('\nTargets');
    const rows = targets.map((check) => [
      check.pass ? 'pass' : 'MISS',
      `${check.scenario}. ${check.target}${check.anchor ? ' (anchor)' : ''}`,
      check.measured,
    ]);
    print(renderText([['result', 'target', 'measured'], ...rows]));
    if (options.json) console.log(JSON.stringify({ meta, scenarios, targets }, null, 2));
    if (options.writeResults) {
      const path = fileURLToPath(new URL('RESULTS.md', import.meta.url));
      const charts = await writeRunCharts(meta, scenarios, log);
      await writeResultsMarkdown(path, meta, scenarios, targets, charts);
      log(`Wrote ${path}`);
    }
    log(`Done in ${meta.durationSec.toFixed(0)} s.`);
  } finally {
    onCellRun(undefined);
    progress.end();
    await target.close();
    await runCleanup();
  }
}

/**
 * Writes the charts to bench/charts/ and returns their links. A chart that fails to render
 * costs the charts, never the run's figures: RESULTS.md is written without them.
 */
async function writeRunCharts(
  meta: RunMeta,
  scenarios: readonly ScenarioResult[],
  log: (line: string) => void,
): Promise<ChartLink[]> {
  try {
    const charts = buildCharts(meta, scenarios);
    await writeCharts(fileURLToPath(new URL('charts', import.meta.url)), charts);
    log(`Wrote ${charts.length} charts to bench/charts/`);
    return charts.map((chart) => ({ path: `charts/${chart.file}`, alt: chart.alt }));
  } catch (error) {
    log(`Charts FAILED, RESULTS.md is written without them: ${String(error)}`);
    return [];
  }
}

/** A scenario that fails is reported as such, and the run goes on with the next one. */
async function runScenario(id: number, context: ScenarioContext): Promise<ScenarioResult> {
  try {
    return await SCENARIOS[id](context);
  } catch (error) {
    context.log(`Scenario ${id} FAILED: ${(error as Error).stack ?? String(error)}`);
    return { id, title: `Scenario ${id}`, cells: [], notes: [`FAILED: ${String(error)}`] };
  }
}

main().catch(async (error: unknown) => {
  console.error(error);
  await runCleanup();
  process.exit(1);
});
