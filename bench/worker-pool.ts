import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { onCleanup } from './cleanup.js';

export interface Message {
  readonly type: string;
  readonly [field: string]: unknown;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A bench worker process (TypeScript through tsx) that answers one message at a time. */
export class BenchWorker {
  private readonly inbox: Message[] = [];
  private wake?: () => void;
  private exitStatus?: string;
  private stderr = '';
  private readonly exited: Promise<void>;

  constructor(
    readonly name: string,
    script: string,
  ) {
    this.child = fork(`${ROOT}bench/${script}`, [], {
      cwd: ROOT,
      execArgv: ['--expose-gc', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    });
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-4_000);
    });
    this.child.on('message', (message) => {
      this.inbox.push(message as Message);
      this.wake?.();
    });
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        this.exitStatus = signal ? `signal ${signal}` : `code ${code}`;
        this.wake?.();
        resolve();
      }),
    );
    onCleanup(() => this.kill());
  }

  private readonly child: ChildProcess;

  send(message: Message): void {
    this.child.send(message);
  }

  /** The next message; rejects on an `error` message, on exit, or after `timeoutMs`. */
  async next(type: string, timeoutMs: number): Promise<Message> {
    const deadline = performance.now() + timeoutMs;
    while (true) {
      const message = this.inbox.shift();
      if (message?.type === type) return message;
      if (message?.type === 'error') throw this.failure(`failed: ${String(message.message)}`);
      if (message) throw this.failure(`sent "${message.type}"`);
      if (this.exitStatus) throw this.failure(`exited (${this.exitStatus})`);
      const left = deadline - performance.now();
      if (left <= 0) throw this.failure(`sent nothing within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** Asks the worker to exit, and kills it if it has not within `graceMs`. */
  async stop(graceMs = 5_000): Promise<void> {
    if (!this.exitStatus) this.send({ type: 'exit' });
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  async kill(): Promise<void> {
    if (!this.exitStatus) this.child.kill('SIGKILL');
    await this.exited;
  }

  private failure(what: string): Error {
    const tail = this.stderr ? `\n--- stderr ---\n${this.stderr}` : '';
    return new Error(`${this.name} (pid ${this.child.pid}) ${what}.${tail}`);
  }
}

/**
 * The worker's side: answers each message from the parent with `handle`'s reply (or an `error`
 * message), and leaves when the parent is gone (killed, crashed), since nobody would say exit.
 */
export function serveParent(handle: (message: Message) => Promise<Message>): void {
  process.on('message', (message: Message) => {
    handle(message).then(
      (reply) => process.send!(reply),
      (error: Error) => process.send!({ type: 'error', message: error.stack ?? error.message }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
