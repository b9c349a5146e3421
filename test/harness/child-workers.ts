import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What a worker and the test send each other over IPC; `type` says which. */
export interface WorkerMessage {
  readonly type: string;
  readonly [field: string]: unknown;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STDERR_TAIL = 4_000;

// Every worker not yet gone, so an afterAll can kill what a failed or timed-out test left.
const live = new Set<ChildWorker>();

/** Path of a fixture in test/fixtures, by its name without `.ts`. */
export function fixturePath(fixture: string): string {
  return `${ROOT}test/fixtures/${fixture}.ts`;
}

/**
 * One worker process running a TypeScript fixture (through tsx), configured by the JSON in
 * `WORKER_CONFIG` and talking to the test over IPC (see worker-process.ts for its side).
 */
export class ChildWorker {
  /** Resolves when the process has exited, however it ended. */
  readonly exited: Promise<void>;
  private readonly inbox: WorkerMessage[] = [];
  private readonly listeners = new Set<() => void>();
  private stderr = '';
  private exitStatus?: string;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
  ) {
    live.add(this);
    child.on('message', (message) => {
      this.inbox.push(message as WorkerMessage);
      this.notify();
    });
    child.stdout!.resume();
    child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-STDERR_TAIL);
    });
    let resolveExited!: () => void;
    this.exited = new Promise((resolve) => (resolveExited = resolve));
    const ended = (status: string): void => {
      if (this.exitStatus) return;
      this.exitStatus = status;
      live.delete(this);
      this.notify();
      resolveExited();
    };
    // 'close' rather than 'exit': by then stderr is fully read, for the error message.
    child.once('close', (code, signal) => ended(signal ? `signal ${signal}` : `code ${code}`));
    // Without a pid the process never started, and no 'exit' will follow.
    child.on('error', (error) => {
      if (child.pid === undefined) ended(`not started: ${error.message}`);
    });
  }

  static spawn(fixture: string, config: unknown, name = fixture): ChildWorker {
    const child = fork(fixturePath(fixture), [], {
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      // Jest's --experimental-vm-modules is of no use to a plain worker.
      env: { ...process.env, NODE_OPTIONS: '', WORKER_CONFIG: JSON.stringify(config) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    return new ChildWorker(name, child);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Sends a message. A worker that is gone never answers it, which `next` reports. */
  send(message: WorkerMessage): void {
    this.child.send(message, () => undefined);
  }

  /**
   * The next message of `type`; messages of other types stay queued. Rejects when the worker
   * reports an error, exits, or stays silent past `timeoutMs`.
   */
  next<T extends WorkerMessage = WorkerMessage>(type: string, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const fail = (why: string): void => {
        done();
        reject(
          new Error(`${this.name} (pid ${this.pid}) ${why}, waiting for "${type}".${this.tail()}`),
        );
      };
      const check = (): void => {
        const index = this.inbox.findIndex((message) => message.type === type);
        if (index >= 0) {
          done();
          resolve(this.inbox.splice(index, 1)[0] as T);
          return;
        }
        const error = this.inbox.find((message) => message.type === 'error');
        if (error) fail(`failed: ${String(error.message)}`);
        else if (this.exitStatus) fail(`exited (${this.exitStatus})`);
      };
      const timer = setTimeout(
        () => fail(`sent nothing within ${Math.round(timeoutMs)} ms`),
        timeoutMs,
      );
      const done = (): void => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
      check();
    });
  }

  /** Lets the worker finish on its own for up to `graceMs`, then kills it. */
  async stop(graceMs = 2_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([this.exited, grace]);
    clearTimeout(timer);
    await this.kill();
  }

  /** SIGKILL unless already gone; resolves once the process has exited. */
  async kill(): Promise<void> {
    if (!this.exitStatus) this.child.kill('SIGKILL');
    await this.exited;
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private tail(): string {
    return this.stderr ? `\n--- stderr tail ---\n${this.stderr}` : '';
  }
}

/**
 * Spawns one worker per config, lets them all start together once every one is ready (so
 * none finishes before the others have connected), and returns each worker's result value in
 * config order. Within `timeoutMs`, or every worker is killed and it rejects.
 */
export async function runWorkers<R>(
  fixture: string,
  configs: readonly unknown[],
  timeoutMs: number,
): Promise<R[]> {
  const deadline = performance.now() + timeoutMs;
  const left = (): number => Math.max(1, deadline - performance.now());
  const workers = configs.map((config, i) => ChildWorker.spawn(fixture, config, `${fixture}#${i}`));
  try {
    await Promise.all(workers.map((worker) => worker.next('ready', left())));
    for (const worker of workers) worker.send({ type: 'start' });
    const results = await Promise.all(workers.map((worker) => worker.next('result', left())));
    await Promise.all(workers.map((worker) => worker.stop()));
    return results.map((result) => result.value as R);
  } catch (error) {
    await Promise.all(workers.map((worker) => worker.kill()));
    throw error;
  }
}

/** Kills every worker still running (for afterAll, after a failed or timed-out test). */
export async function killLiveWorkers(): Promise<void> {
  await Promise.all([...live].map((worker) => worker.kill()));
}
