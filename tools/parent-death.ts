/*
 * Processes that end with the one that started them: a launcher follows its parent (npm, or the
 * shell npm runs it in), and the servers it starts follow the launcher. A SIGTERM or Ctrl-C to
 * any of them, or kill -9 of the launcher, then leaves nothing running.
 */
import { spawnSync } from 'node:child_process';

let hasPdeathsig: boolean | undefined;

/**
 * How to spawn `command` so that the kernel kills it (SIGKILL, which a stopped process obeys
 * too) when the process that spawned it dies, however it died: through util-linux's `setpriv
 * --pdeathsig`, which sets the parent-death signal and execs the command, so its pid is the
 * command's. Where setpriv is missing (macOS), the command is spawned as it is.
 */
export function dyingWithParent(command: string, args: readonly string[]): [string, string[]] {
  hasPdeathsig ??= /--pdeathsig/.test(
    spawnSync('setpriv', ['--help'], { encoding: 'utf8' }).stdout ?? '',
  );
  if (!hasPdeathsig) return [command, [...args]];
  return ['setpriv', ['--pdeathsig', 'KILL', '--', command, ...args]];
}

/**
 * Calls `then` once, when this process's parent is gone: it has been handed to another (init,
 * or a subreaper). Node offers no parent-death signal, so the parent pid is polled, on an unref'd
 * timer that keeps nothing alive.
 */
export function whenParentDies(then: () => void, everyMs = 200): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    then();
  }, everyMs);
  timer.unref();
}
