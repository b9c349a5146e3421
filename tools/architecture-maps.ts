/**
 * The maps of docs/ARCHITECTURE.md, drawn from the code: dependency-cruiser's Mermaid graphs of
 * lib/engine and lib/stores, by the rules of .dependency-cruiser.cjs. `npm run docs:maps` writes
 * them into the page, between their markers; `test/repo/architecture-maps.spec.ts` fails when the
 * page holds a drawing other than a fresh one.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export const ARCHITECTURE = 'docs/ARCHITECTURE.md';

/** Each map: the folder drawn, and the name of its markers in the page. */
export const MAPS = [
  { name: 'engine', folder: 'lib/engine' },
  { name: 'stores', folder: 'lib/stores' },
] as const;

/** The Mermaid graph of one folder's files and their imports (specs left out). */
export function drawMap(folder: string): string {
  const cruise = spawnSync(
    process.execPath,
    [
      'node_modules/dependency-cruiser/bin/dependency-cruise.mjs',
      folder,
      '--include-only',
      `^${folder}/`,
      '--exclude',
      '\\.spec\\.ts$',
      '--output-type',
      'mermaid',
    ],
    { encoding: 'utf8' },
  );
  if (cruise.status !== 0) throw new Error(`dependency-cruiser failed: ${cruise.stderr}`);
  return cruise.stdout.trim();
}

const start = (name: string): string => `<!-- map:${name} (npm run docs:maps) -->`;
const end = (name: string): string => `<!-- /map:${name} -->`;

/** The page with every map drawn afresh between its markers. */
export function withFreshMaps(page: string): string {
  return MAPS.reduce((text, { name, folder }) => {
    const from = text.indexOf(start(name));
    const to = text.indexOf(end(name));
    if (from < 0 || to < from)
      throw new Error(`${ARCHITECTURE} has no markers for the ${name} map`);
    const block = `${start(name)}\n\n\`\`\`mermaid\n${drawMap(folder)}\n\`\`\`\n\n`;
    return text.slice(0, from) + block + text.slice(to);
  }, page);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const page = readFileSync(ARCHITECTURE, 'utf8');
  writeFileSync(ARCHITECTURE, withFreshMaps(page));
}
