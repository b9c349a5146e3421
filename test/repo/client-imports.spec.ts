import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/*
 * Issue 43: the Redis store speaks to each client library through its adapter alone, and
 * importing the package loads no client library: an app installs only the one it uses.
 */

const REDIS_STORE = 'lib/stores/redis';
const LIBRARIES: Record<string, RegExp> = {
  ioredis: /from 'ioredis'|import\('ioredis'\)/,
  'node-redis': /from '(redis|@redis\/client)'|import\('(redis|@redis\/client)'\)/,
  glide: /from '@valkey\/valkey-glide'|import\('@valkey\/valkey-glide'\)/,
};
const FOLDERS: Record<string, string> = {
  ioredis: 'ioredis',
  'node-redis': 'node-redis',
  glide: 'glide',
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

describe('the Redis store and its client libraries', () => {
  const files = sources(REDIS_STORE).map((path) => relative(process.cwd(), path));

  it.each(Object.keys(LIBRARIES))("only the %s adapter's files import it", (library) => {
    const importers = files.filter((file) => LIBRARIES[library]!.test(readFileSync(file, 'utf8')));
    expect(importers.length).toBeGreaterThan(0);
    expect(
      importers.filter((file) => !file.startsWith(`${REDIS_STORE}/${FOLDERS[library]}/`)),
    ).toEqual([]);
  });

  it('ioredis-internals.ts is reached only from the ioredis adapter', () => {
    const importers = files.filter((file) =>
      readFileSync(file, 'utf8').includes("ioredis-internals.js'"),
    );
    expect(importers.length).toBeGreaterThan(0);
    expect(importers.filter((file) => !file.startsWith(`${REDIS_STORE}/ioredis/`))).toEqual([]);
  });

  /** The client libraries Node loads while `load` runs, by name or by their files' path. */
  function librariesLoadedBy(load: string): { stderr: string; loaded: string[] } {
    const check = `
      const { createRequire } = require('node:module');
      const seen = new Set();
      const Module = require('node:module');
      const original = Module._load;
      Module._load = function (request, ...rest) { seen.add(request); return original.call(this, request, ...rest); };
      (async () => { ${load}
        const library = /^(ioredis|redis|@redis\\/client|@valkey\\/valkey-glide)$|node_modules\\/(ioredis|redis|@redis\\/client|@valkey\\/valkey-glide)\\//;
        console.log(JSON.stringify([...seen].filter((name) => library.test(name))));
      })();`;
    const run = spawnSync(process.execPath, ['-e', check], { encoding: 'utf8', timeout: 20_000 });
    return { stderr: run.stderr, loaded: JSON.parse(run.stdout || '[]') as string[] };
  }

  // The built package (npm test builds it first), as an app loads it, ES module and CommonJS.
  it.each([
    ['import', "await import('./dist/index.js'); await import('./dist/store/index.js');"],
    ['require', "require('./dist/cjs/index.js'); require('./dist/cjs/store/index.js');"],
  ])('loading the package (%s) loads no client library', (_, load) => {
    expect(librariesLoadedBy(load)).toEqual({ stderr: '', loaded: [] });
  });

  it('canary: the check sees a client library an ES module loads', () => {
    const { loaded } = librariesLoadedBy("await import('ioredis'); await import('redis');");
    expect(loaded.some((name) => name.includes('ioredis'))).toBe(true);
    expect(loaded.some((name) => name.includes('@redis/client'))).toBe(true);
  });
});
