/**
 * The worker's side of child-workers.ts: read the config, say ready, wait for the start,
 * exchange messages, send one result. Only for code running in a forked worker process.
 */
import type { WorkerMessage } from './child-workers.js';

const inbox: WorkerMessage[] = [];
const listeners = new Set<() => void>();

if (!process.send) throw new Error('worker-process.ts runs only in a worker forked with IPC.');
process.on('message', (message) => {
  inbox.push(message as WorkerMessage);
  for (const listener of [...listeners]) listener();
});
// The test is gone (crashed or killed): do not linger as an orphan holding locks.
process.on('disconnect', () => process.exit(process.exitCode ?? 0));

export function workerConfig<C>(): C {
  return JSON.parse(process.env.WORKER_CONFIG ?? '{}') as C;
}

/** Sends a message; resolves once it is handed to the IPC channel. */
export function post(message: WorkerMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    process.send!(message, undefined, {}, (error) => (error ? reject(error) : resolve()));
  });
}

/** The next message of `type` from the test; others stay queued. */
export function nextMessage<T extends WorkerMessage = WorkerMessage>(type: string): Promise<T> {
  return new Promise((resolve) => {
    const check = (): void => {
      const index = inbox.findIndex((message) => message.type === type);
      if (index < 0) return;
      listeners.delete(check);
      resolve(inbox.splice(index, 1)[0] as T);
    };
    listeners.add(check);
    check();
  });
}

/** Tells the test this worker is set up, then waits until the test starts every worker. */
export async function readyThenStart(): Promise<void> {
  await post({ type: 'ready' });
  await nextMessage('start');
}

/** Runs the worker's body and sends its return value as the result (or its failure). */
export async function runWorker<C>(body: (config: C) => Promise<unknown>): Promise<void> {
  try {
    const value = await body(workerConfig<C>());
    await post({ type: 'result', value });
  } catch (error) {
    process.exitCode = 1;
    await post({ type: 'error', message: error instanceof Error ? error.stack : String(error) });
  } finally {
    process.disconnect();
  }
}
