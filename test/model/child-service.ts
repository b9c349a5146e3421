/**
 * A lock service in a child process (test/fixtures/model-service.ts): the one kind of service
 * the checker can SIGKILL, or SIGSTOP past its leases. Its reports arrive over IPC. Processes
 * outlive a run and are lent out by a pool; a killed one is replaced.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fixturePath } from '../harness/child-workers.js';
import { forgetPid, watchPid } from '../harness/process-watchdog.js';
import type { ModelServiceConfig, ModelServiceMessage } from '../fixtures/model-service.js';
import type { ServiceHandle } from './local-service.js';
import type { StoreLink } from './model-backend.js';
import type { Op, ServiceSetup } from './model-ops.js';
import type { ServiceReport } from './model-records.js';

/** tsx compiles the fixture at start: slow on a loaded 2-core machine. */
const READY_MS = 30_000;
/** An audit or a question to a live, running child comes back within this. */
const ANSWER_MS = 5_000;

type Reply = { type: string; n?: number; busy?: boolean; note?: string; report?: ServiceReport };

export class ChildService implements ServiceHandle {
  readonly inChild = true;
  note?: string;
  private asked = 0;
  private readonly waiting = new Map<string, (reply: Reply) => void>();
  private pausedUntil = 0;
  private resumeTimer?: NodeJS.Timeout;
  private readonly exited: Promise<void>;

  private readonly listener: (reply: Reply) => void;

  private constructor(
    readonly svc: number,
    private readonly child: ChildProcess,
    emit: (report: ServiceReport) => void,
    private readonly pool: ChildPool,
  ) {
    this.exited = pool.exited(child);
    this.listener = (reply) => {
      if (reply.type === 'report') return emit(reply.report!);
      const key = `${reply.type}:${reply.n ?? ''}`;
      this.waiting.get(key)?.(reply);
      this.waiting.delete(key);
    };
    child.on('message', this.listener);
  }

  static async start(
    svc: number,
    setup: ServiceSetup,
    link: StoreLink,
    probePorts: readonly number[],
    emit: (report: ServiceReport) => void,
    pool: ChildPool,
  ): Promise<ChildService> {
    const config: ModelServiceConfig = { svc, setup, link, probePorts };
    const service = new ChildService(svc, await pool.take(), emit, pool);
    const ready = await service.ask('ready', { type: 'setup', config }, READY_MS);
    if (!ready) throw new Error(`child service s${svc} did not set up within ${READY_MS} ms`);
    service.note = ready.note;
    return service;
  }

  private get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  private send(message: ModelServiceMessage): void {
    if (this.alive) this.child.send(message, () => undefined);
  }

  /** Sends `question` and waits for the reply of `type` (undefined if none comes in time). */
  private ask(
    type: string,
    question: ModelServiceMessage | undefined,
    timeoutMs: number,
  ): Promise<Reply | undefined> {
    const n = question && 'n' in question ? question.n : undefined;
    if (!this.alive) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const key = `${type}:${n ?? ''}`;
      const timer = setTimeout(() => (this.waiting.delete(key), resolve(undefined)), timeoutMs);
      this.waiting.set(key, (reply) => (clearTimeout(timer), resolve(reply)));
      if (question) this.send(question);
      void this.exited.then(
        () => (this.waiting.delete(key), clearTimeout(timer), resolve(undefined)),
      );
    });
  }

  run(op: Op): void {
    this.send({ type: 'op', op });
  }

  async busy(): Promise<boolean> {
    if (!this.alive || performance.now() < this.pausedUntil) return this.alive;
    return (await this.ask('busy', { type: 'busy', n: ++this.asked }, ANSWER_MS))?.busy ?? false;
  }

  async audit(): Promise<void> {
    // A stopped process answers nothing; its sections end at their last claim anyway.
    if (!this.alive || performance.now() < this.pausedUntil) return;
    await this.ask('audited', { type: 'audit', n: ++this.asked }, ANSWER_MS);
  }

  async pause(ms: number): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGSTOP');
    this.pausedUntil = performance.now() + ms;
    this.resumeTimer = setTimeout(() => this.resume(), ms);
  }

  async kill(): Promise<void> {
    if (this.alive) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** Ends the run's engine; the process goes back to the pool (or is killed if it hangs). */
  async close(graceMs: number): Promise<void> {
    this.resume();
    const closed =
      this.alive && (await this.ask('closed', { type: 'close', graceMs }, graceMs + ANSWER_MS));
    this.child.off('message', this.listener);
    if (closed) return this.pool.give(this.child);
    await this.kill();
  }

  private resume(): void {
    clearTimeout(this.resumeTimer);
    this.pausedUntil = 0;
    if (this.alive) this.child.kill('SIGCONT');
  }
}

/** Child processes kept between runs; each serves one run at a time. */
export class ChildPool {
  private readonly idle: ChildProcess[] = [];
  private readonly all = new Set<ChildProcess>();
  private readonly exits = new WeakMap<ChildProcess, Promise<void>>();

  /** Resolves once `child` has exited (one listener per process, however many runs it serves). */
  exited(child: ChildProcess): Promise<void> {
    return this.exits.get(child) ?? Promise.resolve();
  }

  /** Starts `count` processes in the background, so that the first run need not wait. */
  warm(count: number): void {
    for (let i = 0; i < count; i++)
      void this.spawn().then(
        (child) => this.give(child),
        () => undefined,
      );
  }

  async take(): Promise<ChildProcess> {
    for (let child = this.idle.pop(); child; child = this.idle.pop()) {
      if (child.exitCode === null && child.signalCode === null) return child;
    }
    return this.spawn();
  }

  give(child: ChildProcess): void {
    if (child.exitCode === null && child.signalCode === null) this.idle.push(child);
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.all].map((child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        return exited;
      }),
    );
  }

  private spawn(): Promise<ChildProcess> {
    const child = fork(fixturePath('model-service'), [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    this.all.add(child);
    watchPid(child.pid!);
    this.exits.set(
      child,
      new Promise((resolve) =>
        child.once('exit', () => {
          forgetPid(child.pid!);
          this.all.delete(child);
          resolve();
        }),
      ),
    );
    child.stderr!.on('data', (chunk: Buffer) =>
      process.stderr.write(`[pid ${child.pid}] ${chunk}`),
    );
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('a child service did not start')), READY_MS);
      child.once('message', () => (clearTimeout(timer), resolve(child)));
    });
  }
}
