import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { forgetPid, watchPid } from './process-watchdog.js';
import { freePort } from './redis-server.js';
import { waitUntil } from './waits.js';

/** `count` distinct free loopback ports (the OS may hand the same one out twice in a row). */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/** True when something on `port` answers PING with +PONG (works for redis-server and sentinel). */
export function answersPing(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (chunk) => done(chunk.toString().startsWith('+PONG')));
  });
}

/**
 * One redis-server or redis-sentinel child on a known loopback port. Spawning is synchronous so
 * the owner can register the handle before awaiting readiness, and kill it if readiness fails.
 */
export class RedisProcess {
  private output = '';
  private spawnError?: Error;

  private constructor(
    readonly port: number,
    private readonly child: ChildProcess,
  ) {
    if (child.pid) watchPid(child.pid);
    child.once('exit', () => forgetPid(child.pid!));
    child.once('error', (error) => (this.spawnError = error)); // e.g. ENOENT: no pid, no 'exit'
    // Keep draining the pipes (a full pipe would block redis) and keep a tail for error messages.
    const keepTail = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString()).slice(-4000);
    };
    for (const pipe of [child.stdout!, child.stderr!]) {
      pipe.on('data', keepTail);
      (pipe as Socket).unref();
    }
    // A forgotten process must not keep the test runner alive; the watchdog kills it at exit.
    child.unref();
  }

  /** `args` is passed as-is: a config file path first, then `--option value` pairs. */
  static spawn(
    binary: 'redis-server' | 'redis-sentinel',
    port: number,
    args: readonly string[],
  ): RedisProcess {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    return new RedisProcess(port, child);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get alive(): boolean {
    return !this.spawnError && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The last few KB of the process's log, for failure messages. */
  get log(): string {
    return this.output;
  }

  /** Resolves once the process answers PING; fails fast with its log if it exits first. */
  async ready(timeoutMs = 10_000): Promise<void> {
    await waitUntil(
      `redis on port ${this.port} to answer PING`,
      async () => {
        if (!this.alive) {
          throw new Error(
            `redis on port ${this.port} died: ${this.spawnError ?? ''}\n${this.output}`,
          );
        }
        return answersPing(this.port);
      },
      timeoutMs,
      25,
    );
  }

  /** SIGSTOP / SIGCONT: the process stays up but answers nothing. */
  pause(): void {
    if (this.alive) this.child.kill('SIGSTOP');
  }

  resume(): void {
    if (this.alive) this.child.kill('SIGCONT');
  }

  /** SIGKILL (no shutdown, no save) and wait until the process is gone. */
  async kill(): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.ref(); // or a script's event loop could end before the 'exit' arrives
    this.child.kill('SIGKILL');
    await exited;
  }
}

/** Whether a process with this pid exists (signal 0 only checks). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
