import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';

import { freePort, spawnRedisServer } from '../../tools/redis-launcher.js';
import { expectEveryLockKeyToExpire } from './key-expiry.js';
import { OWNED_DISCONNECT_TIMEOUT_MS } from '../../lib/stores/redis/ioredis/owned-client.js';

export { assertRedisInstalled, REDIS_INSTALL_HINT } from './global-setup.js';

/**
 * For the tests' own clients: dropped while their server is down, they would otherwise hold
 * the Jest worker up for ioredis's 2 s `disconnectTimeout` (see close-while-down.spec.ts).
 */
export const DROPPED_AT_ONCE = { disconnectTimeout: OWNED_DISCONNECT_TIMEOUT_MS } as const;
export { freePort };

/** A throwaway redis-server on a loopback port, owned by the test that started it. */
export class RedisServer {
  private child?: ChildProcess;
  private paused = false;

  private constructor(
    readonly port: number,
    private readonly extraArgs: readonly string[],
  ) {}

  /** On `port` when given (a caller that picked several ports at once), else on a free one. */
  static async start(extraArgs: readonly string[] = [], port?: number): Promise<RedisServer> {
    const server = new RedisServer(port ?? (await freePort()), extraArgs);
    await server.launch();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** A new client; the caller closes it. */
  client(options: { db?: number } = {}): Redis {
    const client = new Redis({
      host: '127.0.0.1',
      port: this.port,
      db: options.db ?? 0,
      maxRetriesPerRequest: 1,
      ...DROPPED_AT_ONCE,
    });
    client.on('error', () => undefined);
    return client;
  }

  /** SIGSTOP / SIGCONT: the server stays up but answers nothing. */
  pause(): void {
    this.paused = true;
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.paused = false;
    this.child?.kill('SIGCONT');
  }

  /**
   * Stops the server (SIGKILL: no shutdown, no save) and waits until it is gone. Fails, once it
   * is gone, if the library left a key without an expiry there (see key-expiry.ts), unless
   * `checkKeys` is false (the model checker judges that itself, as one of its invariants).
   */
  async stop(checkKeys = true): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const leftovers =
      this.paused || !checkKeys ? undefined : expectEveryLockKeyToExpire([this.port]);
    await leftovers?.catch(() => undefined);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
    this.child = undefined;
    this.paused = false;
    await leftovers;
  }

  /**
   * Starts the server again on the same port: empty, unless `extraArgs` gave it a `--dir` of
   * its own holding an RDB file it then loads. `checkKeys`: as `stop`'s.
   */
  async restart(checkKeys = true): Promise<void> {
    await this.stop(checkKeys);
    await this.launch();
  }

  private async launch(): Promise<void> {
    this.child = await spawnRedisServer(this.port, this.extraArgs);
  }
}
