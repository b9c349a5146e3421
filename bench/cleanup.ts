/**
 * Whatever the bench started (redis-server, worker processes) is stopped here on the way out,
 * including on Ctrl-C, so an interrupted run leaves nothing behind.
 */
const tasks: (() => Promise<void> | void)[] = [];
let running: Promise<void> | undefined;

export function onCleanup(task: () => Promise<void> | void): void {
  tasks.push(task);
}

export function runCleanup(): Promise<void> {
  running ??= (async () => {
    for (const task of tasks.splice(0).reverse()) await Promise.resolve(task()).catch(() => {});
  })();
  return running;
}

const pidsToKill = new Set<number>();

/**
 * A process to kill if the bench exits without running its cleanup (a crash, an early exit):
 * signals can still be sent from an 'exit' handler, where nothing async runs.
 */
export function killOnExit(pid: number): void {
  pidsToKill.add(pid);
}

export function cleanupOnSignals(): void {
  process.on('exit', () => {
    for (const pid of pidsToKill) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
  });
  // A reader that stops early (`| head`) must not crash the bench before it cleans up.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping what the bench started…`);
      runCleanup().finally(() => process.exit(130));
    });
  }
}
