import { readdir, readFile } from 'node:fs/promises';

/**
 * A smell alarm, not a target: a file of `lib/` past this many lines likely holds more than one
 * role. A file is split by role, never to fit a line count (issue 42 replaced issue 29's cap of
 * 250, which invited splitting one role in two).
 */
const MOST_LINES = 400;

describe('the files of lib/', () => {
  it(`have at most ${MOST_LINES} lines each`, async () => {
    const files = (await readdir('lib', { recursive: true })).filter(
      (path) => path.endsWith('.ts') && !path.endsWith('.spec.ts'),
    );
    const lengths = await Promise.all(
      files.map(async (path) => ({
        path,
        lines: (await readFile(`lib/${path}`, 'utf8')).trimEnd().split('\n').length,
      })),
    );
    expect(files.length).toBeGreaterThan(50);
    expect(lengths.filter(({ lines }) => lines > MOST_LINES)).toEqual([]);
  });
});
