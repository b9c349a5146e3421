import type { RedisServer } from './redis-server.js';
import { sleep } from './waits.js';
import { hrNow, MS, type Window } from './chaos-sections.js';

/**
 * Injects faults into one redis-server and remembers when each happened, by a name of the
 * test's choosing, in hrtime: the clock worker processes stamp their sections with.
 */
export class FaultTimeline {
  private readonly faults: { readonly name: string; readonly window: Window }[] = [];

  constructor(private readonly server: RedisServer) {}

  /** Stops Redis (SIGSTOP) for `ms`: it keeps its keys, and its clock, but answers nothing. */
  async pause(name: string, ms: number): Promise<void> {
    const from = hrNow();
    this.server.pause();
    try {
      await sleep(ms);
    } finally {
      this.server.resume();
    }
    this.faults.push({ name, window: [from, hrNow()] });
  }

  /** Kills Redis and starts it again empty (no persistence), on the same port. */
  async restart(name: string): Promise<void> {
    const from = hrNow();
    await this.server.restart();
    this.faults.push({ name, window: [from, hrNow()] });
  }

  /**
   * The faults called `name` (every fault when undefined), each from its start to `tailMs`
   * after it ended (Redis resumed, or back up).
   */
  windows(name: string | undefined, tailMs: number): Window[] {
    return this.faults
      .filter((fault) => name === undefined || fault.name === name)
      .map(({ window: [from, to] }): Window => [from, to + BigInt(tailMs) * MS]);
  }
}
