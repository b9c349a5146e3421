import { readdir, readFile } from 'node:fs/promises';

/**
 * A file of `lib/` holds one role and says it in its first comment; a split names the two roles
 * it parts. Past this many lines a file likely holds more than one role: a smell alarm, not a
 * target (issue 42 replaced issue 29's cap of 250, which invited splitting one role in two).
 */
const MOST_LINES = 400;

/** The file's code after its imports and re-exports: where its first comment must stand. */
function afterImports(source: string): string {
  const importLine = /^(import|export)\b[^;]*?\bfrom\s+'[^']+';\s*|^import\s+'[^']+';\s*/s;
  let rest = source.trimStart();
  for (let found = importLine.exec(rest); found; found = importLine.exec(rest)) {
    rest = rest.slice(found[0].length).trimStart();
  }
  return rest;
}

async function libFiles(): Promise<{ path: string; source: string }[]> {
  const paths = (await readdir('lib', { recursive: true })).filter(
    (path) => path.endsWith('.ts') && !path.endsWith('.spec.ts'),
  );
  return Promise.all(
    paths.map(async (path) => ({ path, source: await readFile(`lib/${path}`, 'utf8') })),
  );
}

describe('the files of lib/', () => {
  it(`have at most ${MOST_LINES} lines each`, async () => {
    const files = await libFiles();
    const long = files
      .map(({ path, source }) => ({ path, lines: source.trimEnd().split('\n').length }))
      .filter(({ lines }) => lines > MOST_LINES);
    expect(files.length).toBeGreaterThan(50);
    expect(long).toEqual([]);
  });

  it('each say their role in a comment before their first declaration', async () => {
    const silent = (await libFiles()).filter(({ source }) => {
      // A script's first line may be its shebang.
      const opening = source.replace(/^#!.*\n/, '').trimStart();
      const code = afterImports(source);
      return !/^(\/\*|\/\/)/.test(opening) && !/^(\/\*|\/\/)/.test(code);
    });
    expect(silent.map(({ path }) => path)).toEqual([]);
  });

  it('reads a file without such a comment as silent', () => {
    const source = "import { a } from './a.js';\nexport const b = a;\n";
    expect(afterImports(source)).toBe('export const b = a;\n');
    expect(afterImports("import x from 'y';\n/** Role. */\nconst z = 1;")).toBe(
      '/** Role. */\nconst z = 1;',
    );
  });
});
