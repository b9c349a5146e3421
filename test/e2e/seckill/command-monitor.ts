import type { Redis } from 'ioredis';

/**
 * Records every command Redis runs (MONITOR), to tell whether a request touched a key at all:
 * a lock taken and released within a request leaves no key to find afterwards.
 */
export class CommandMonitor {
  private commands: string[][] = [];

  private constructor(
    private readonly monitor: Redis,
    private readonly probe: Redis,
  ) {
    monitor.on('monitor', (_time: string, args: string[]) => this.commands.push(args));
  }

  /** Opens two connections like `client`'s: one watches, the other marks where a step ends. */
  static async start(client: Redis): Promise<CommandMonitor> {
    const monitor = await client.monitor();
    const probe = client.duplicate();
    // Closed in `stop`; until then a lost connection must not crash the test run.
    for (const connection of [monitor, probe]) connection.on('error', () => undefined);
    return new CommandMonitor(monitor, probe);
  }

  /**
   * Runs `step` and returns its result with every command Redis ran meanwhile. A marker sent
   * after the step and seen by the monitor proves the feed has caught up: no sleep needed.
   */
  async during<T>(step: () => Promise<T>): Promise<{ result: T; commands: string[][] }> {
    this.commands = [];
    const result = await step();
    const marker = `end-of-step-${Math.random()}`;
    await this.probe.echo(marker);
    await new Promise<void>((resolve) => {
      const seen = (_time: string, args: string[]): void => {
        if (args[0]?.toLowerCase() !== 'echo' || args[1] !== marker) return;
        this.monitor.off('monitor', seen);
        resolve();
      };
      this.monitor.on('monitor', seen);
      if (this.commands.some((args) => args[1] === marker)) seen('', ['echo', marker]);
    });
    const commands = this.commands.filter((args) => args[1] !== marker);
    return { result, commands };
  }

  async stop(): Promise<void> {
    this.monitor.disconnect();
    await this.probe.quit();
  }
}

/** The commands that name a key of the lock module (default `lock:` prefix). */
export function lockCommands(commands: readonly string[][]): string[][] {
  return commands.filter((args) => args.some((arg) => /^\{?lock:/.test(arg)));
}
