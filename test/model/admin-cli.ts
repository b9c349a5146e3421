/**
 * The admin CLI as an operator runs it, in a process of its own: `release <key> --force`
 * against the target's store. Built JavaScript (dist/), as the package's `bin` ships it.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT } from '../../lib/cli/exit-codes.js';

const CLI = 'dist/cli/main.js';
/** The CLI answers within its own --timeout; past this, the process is stuck. */
const CLI_LIMIT_MS = 15_000;

/** Resolves with whether the CLI released a lock (exit 0) or found the key free (exit 1). */
export function cliForceRelease(
  args: readonly string[],
  key: string,
  prefix: string,
): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const argv = [CLI, 'release', key, '--force', '--prefix', prefix, ...args];
    execFile(process.execPath, argv, { timeout: CLI_LIMIT_MS }, (error, stdout, stderr) => {
      const code = error ? (error as { code?: unknown }).code : EXIT.ok;
      if (code === EXIT.ok) return resolve(true);
      if (code === EXIT.notFound) return resolve(false);
      reject(new Error(`admin CLI exited ${String(code)}: ${stderr || stdout}`));
    });
  });
}

/** Whether dist/ holds a CLI built from the lib/ sources as they are now. */
export function cliIsFresh(root = '.'): boolean {
  const built = join(root, CLI);
  if (!existsSync(built)) return false;
  return newest(join(root, 'lib')) <= statSync(built).mtimeMs;
}

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}
