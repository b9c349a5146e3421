import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { asStoreError } from '../../lib/stores/store-refusals.js';
import { brokenLinks, REPO_BLOB } from '../harness/doc-links.js';

const ROOT = resolve('.');
const REPOSITORY = 'https://github.com/nestjs-distributed-lock/nestjs-distributed-lock';

/** The files `npm pack` puts in the tarball (what `npm publish` ships), without building. */
function packedFiles(): Set<string> {
  const json = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [pack] = JSON.parse(json) as [{ files: { path: string }[] }];
  return new Set(pack.files.map((file) => file.path));
}

describe('the package as npm ships it', () => {
  const packed = packedFiles();

  it('names its repository, home page and issue tracker', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(pkg.repository).toEqual({ type: 'git', url: `git+${REPOSITORY}.git` });
    expect(pkg.homepage).toBe(`${REPOSITORY}#readme`);
    expect(pkg.bugs).toEqual({ url: `${REPOSITORY}/issues` });
    expect(REPO_BLOB.startsWith(`${REPOSITORY}/blob/`)).toBe(true);
  });

  it('ships the docs the README links to', () => {
    expect(packed).toContain('README.md');
    expect(packed).toContain('docs/acl.md');
    expect(packed).toContain('docs/api.md');
  });

  // npm's page resolves a relative link against `repository`; an installed copy, in the tarball.
  it('has every relative link of its pages reach a file in the tarball, or is absolute', () => {
    const pages = [...packed].filter((path) => path.endsWith('.md'));
    expect(pages).toContain('README.md');
    const repoHas = (path: string): boolean => existsSync(join(ROOT, path));
    const broken = pages.flatMap((page) =>
      brokenLinks(ROOT, page, (path) => packed.has(path), repoHas),
    );
    expect(broken).toEqual([]);
  });

  it('names, in a refusal, a page an installed user can open', () => {
    const reply = Object.assign(
      new Error("NOPERM User orders has no permissions to run the 'time' command"),
      {
        name: 'ReplyError',
      },
    );
    const message = asStoreError(reply, 'k', 'acquire', 'lock:').message;
    const page = /See (\S+?)\.? /.exec(message)?.[1];
    const installed = 'node_modules/nestjs-distributed-lock/';
    expect(page?.startsWith(installed)).toBe(true);
    expect(packed).toContain(page!.slice(installed.length));
  });
});
