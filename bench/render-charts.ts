/**
 * Renders the bench's charts from a JSON document of `npm run bench -- --json`, without running
 * the bench: `npm run bench:charts -- <results.json> [out-dir]` (default bench/charts).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { writeCharts } from './chart-render.js';
import type { ChartMeta } from './chart-panels.js';
import { buildCharts } from './charts.js';
import type { ScenarioResult } from './results.js';

async function main(): Promise<void> {
  const [input, outDir = fileURLToPath(new URL('charts', import.meta.url))] = process.argv.slice(2);
  if (!input) {
    console.error('Usage: npm run bench:charts -- <results.json> [out-dir]');
    process.exit(2);
  }
  const text = readFileSync(input, 'utf8');
  // `npm run` without --silent prints its script headers on stdout, before the document.
  const start = text.startsWith('{') ? 0 : text.indexOf('\n{') + 1;
  const document = JSON.parse(text.slice(start)) as {
    meta: ChartMeta;
    scenarios: ScenarioResult[];
  };
  const written = await writeCharts(outDir, buildCharts(document.meta, document.scenarios));
  for (const path of written) console.log(`Wrote ${path}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
