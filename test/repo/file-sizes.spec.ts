import { readdir, readFile } from 'node:fs/promises';

/** Issue 29's bound: a file of `lib/` a newcomer reads in one sitting. */
const MOST_LINES = 250;

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
