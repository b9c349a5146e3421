import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The earlier build scenario 10 runs beside this one: commit 407040a, the last before the
 * waiters' mark (decision 13), whose release with a waiter in another process was one call.
 * Issue 43 measured its cross-process hand-off at 1.60-1.76 ms p50 against 1.90-2.35 ms for the
 * code that added the mark.
 */
export const BASELINE_COMMIT = '407040a';
/** This checkout's build, as scenario 10 names it beside the baseline. */
export const CURRENT_BUILD = 'current';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Returns `dir` once it holds a build of `BASELINE_COMMIT` (its dist/index.js). A directory
 * without one is filled from git first: the commit's files (`git archive`, which leaves the
 * repository's list of worktrees alone), this checkout's node_modules linked in (the same
 * ioredis and Nest for both builds, so only the library's code differs), and `npm run build`.
 * Never inside the repository: the build is not part of it.
 */
export function ensureBaseline(dir: string, log: (line: string) => void): string {
  if (existsSync(`${dir}/dist/index.js`)) return dir;
  if (existsSync(`${dir}/package.json`)) {
    throw new Error(`${dir} holds a checkout without dist/: run \`npm run build\` there`);
  }
  log(`Building ${BASELINE_COMMIT} in ${dir} for scenario 10 (once)…`);
  mkdirSync(dir, { recursive: true });
  const extract = 'git archive --format=tar "$1" | tar -x -C "$2"';
  execFileSync('bash', ['-o', 'pipefail', '-c', extract, 'bash', BASELINE_COMMIT, dir], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (!existsSync(`${dir}/node_modules`)) symlinkSync(`${ROOT}node_modules`, `${dir}/node_modules`);
  execFileSync('npm', ['run', 'build', '--silent'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return dir;
}
