import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

// Jest hands test code a copy of `process`, so an 'exit' hook from a spec never runs, and a
// worker killed on timeout runs none at all. A separate watchdog does not depend on either: it
// learns each pid on its stdin and SIGKILLs the ones still listed when that pipe closes, which
// happens however this process ends. Pids are also taken off the list as soon as they exit,
// since pids are reused quickly here (pid_max can be as low as 32768).
const WATCHDOG = `
declare -A pids
while read -r op pid; do
  if [ "$op" = + ]; then pids[$pid]=1; else unset "pids[$pid]"; fi
done
if [ \${#pids[@]} -gt 0 ]; then kill -9 "\${!pids[@]}" 2>/dev/null; fi
exit 0`;

let watchdog: ChildProcess | undefined;
const watched = new Set<number>();

function tell(line: string): void {
  if (!watchdog) {
    watchdog = spawn('bash', ['-c', WATCHDOG], { stdio: ['pipe', 'ignore', 'ignore'] });
    watchdog.stdin!.on('error', () => undefined); // it died: nothing left to tell it
    // Never what keeps the test runner alive.
    (watchdog.stdin as Socket).unref();
    watchdog.unref();
  }
  watchdog.stdin!.write(`${line}\n`);
}

/** Kill `pid` if this process ends while it is still watched. */
export function watchPid(pid: number): void {
  watched.add(pid);
  tell(`+ ${pid}`);
}

/** `pid` has exited: stop watching it (it may soon belong to someone else). */
export function forgetPid(pid: number): void {
  if (!watched.delete(pid)) return;
  tell(`- ${pid}`);
  if (watched.size === 0) {
    // Nothing left to guard: let the watchdog exit rather than linger between specs.
    watchdog?.stdin!.end();
    watchdog = undefined;
  }
}
