import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

/**
 * docs/ARCHITECTURE.md is the maintainers' map: every file, folder and code symbol it names
 * must exist, so that a rename or a fold cannot leave it pointing at nothing.
 */
const DOC = 'docs/ARCHITECTURE.md';

/** The repository's files, as git knows them (tracked, or new and not ignored). */
const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  encoding: 'utf8',
})
  .split('\n')
  .filter((path) => path !== '' && !path.startsWith('sample-app/dist/') && existsSync(path));
const folders = new Set(files.flatMap((path) => ancestors(path)));

function ancestors(path: string): string[] {
  const parts = path.split('/').slice(0, -1);
  return parts.map((_, i) => `${parts.slice(0, i + 1).join('/')}/`);
}

/** Code spans and fenced blocks: where the doc names files and symbols. */
function codeSpans(doc: string): string[] {
  const fenced = [...doc.matchAll(/```[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1]);
  const inline = [...doc.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
  return [...fenced, ...inline];
}

/**
 * Paths: words with a folder or a file extension. A doc names them from the root (`lib/…`), or
 * inside the layer it describes (`hold/lock-leases.ts`, `stores/redis/scripts/`): a path exists
 * when some file or folder ends with it.
 */
function namedPaths(spans: string[]): string[] {
  const path =
    /(?<![\w@.-])((?:[\w.-]+\/)+[\w.-]*|[\w-]+(?:\.[\w-]+)*\.(?:ts|md|json|sh|js))(?![\w/])/g;
  const found = spans.flatMap((span) => [...span.matchAll(path)].map((m) => m[1]));
  return [...new Set(found)].filter((name) => /^[a-z.]/.test(name) && !BUILT.test(name));
}

/** What the build writes: named by the doc, absent from a clean checkout. */
const BUILT = /^(?:dist|sample-app\/dist)\//;

function exists(path: string): boolean {
  const suffix = (name: string): boolean => name === path || name.endsWith(`/${path}`);
  return files.some(suffix) || [...folders].some(suffix);
}

/** Symbols (the code's, or a setting's): identifiers with an inner capital or an underscore (`LeaseWatchdog`, `CALL_SLICE`). */
function namedSymbols(spans: string[]): string[] {
  const symbol = /(?<![\w.'"/-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?![\w'"/-])/g;
  const found = spans
    .filter((span) => !/\s/.test(span.trim()) || /^[\w.]+\(/.test(span))
    .flatMap((span) => [...span.matchAll(symbol)].map((m) => m[1]));
  return [...new Set(found.flatMap((name) => name.split('.')))].filter((name) =>
    /[a-z][A-Z]|^[A-Z][a-z]+[A-Z]|^[A-Z][A-Z0-9]*_[A-Z0-9_]+$/.test(name),
  );
}

const sources = files
  .filter((path) => /^(lib|test|bench|sample-app|tools)\/.*\.ts$|^[^/]+\.(json|js)$/.test(path))
  .filter((path) => !path.startsWith('test/repo/') && path !== 'package-lock.json')
  .map((path) => readFileSync(path, 'utf8'))
  .join('\n');

describe(DOC, () => {
  const spans = codeSpans(readFileSync(DOC, 'utf8'));

  it('names only files and folders that exist', () => {
    const paths = namedPaths(spans);
    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((path) => !exists(path))).toEqual([]);
  });

  it('names only symbols that the code declares or uses', () => {
    const symbols = namedSymbols(spans);
    expect(symbols.length).toBeGreaterThan(30);
    const missing = symbols.filter((name) => !new RegExp(`\\b${name}\\b`).test(sources));
    expect(missing).toEqual([]);
  });

  it('would catch a renamed file and a renamed symbol', () => {
    expect(exists('hold/lease-watchdog.ts')).toBe(true);
    expect(exists('hold/lease-dog.ts')).toBe(false);
    expect(namedSymbols(['`LeaseWatchdogg`'])).toEqual(['LeaseWatchdogg']);
    expect(/\bLeaseWatchdogg\b/.test(sources)).toBe(false);
  });
});
