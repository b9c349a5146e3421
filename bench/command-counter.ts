import { Redis } from 'ioredis';

/**
 * Counts Redis commands two ways. The server's `INFO commandstats` counts every command it ran,
 * including those a Lua script ran (Redis 7 does: `verifyScriptCounting` checks it at start).
 * The client-side tally counts only what ioredis sent (top-level calls: EVALSHA, SET, ...).
 * Their difference is the work done inside scripts.
 */
export type CommandCounts = Record<string, number>;

// The bench's own probes: left out of every total.
const EXCLUDED = new Set(['info', 'config|resetstat', 'flushall', 'dbsize', 'ping']);

const sentByThisProcess = new Map<string, number>();
let patched = false;

/** Wraps ioredis' single send path once, so every command this process sends is tallied. */
export function countClientCommands(): void {
  if (patched) return;
  patched = true;
  const proto = Redis.prototype as unknown as {
    sendCommand: (command: { name: string }, ...rest: unknown[]) => unknown;
  };
  const original = proto.sendCommand;
  proto.sendCommand = function (this: unknown, command, ...rest) {
    const name = command.name.toLowerCase();
    sentByThisProcess.set(name, (sentByThisProcess.get(name) ?? 0) + 1);
    return original.call(this, command, ...rest);
  };
}

export function clientCommandSnapshot(): CommandCounts {
  return Object.fromEntries(sentByThisProcess);
}

export async function serverCommandSnapshot(admin: Redis): Promise<CommandCounts> {
  const text = await admin.info('commandstats');
  const counts: CommandCounts = {};
  for (const line of text.split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (match) counts[match[1]] = Number(match[2]);
  }
  return counts;
}

export function delta(after: CommandCounts, before: CommandCounts): CommandCounts {
  const result: CommandCounts = {};
  for (const [name, calls] of Object.entries(after)) {
    const diff = calls - (before[name] ?? 0);
    if (diff > 0 && !EXCLUDED.has(name)) result[name] = diff;
  }
  return result;
}

export function total(counts: CommandCounts): number {
  return Object.values(counts).reduce((sum, calls) => sum + calls, 0);
}

export function sumCounts(all: readonly CommandCounts[]): CommandCounts {
  const result: CommandCounts = {};
  for (const counts of all)
    for (const [name, calls] of Object.entries(counts)) result[name] = (result[name] ?? 0) + calls;
  return result;
}

/** Commands of one measured window: on the server (all) and as sent by clients (top level). */
export interface CommandWindow {
  readonly server: CommandCounts;
  readonly client: CommandCounts;
}

/** Opens a window; the returned function closes it. Children's client tallies are added by callers. */
export async function openCommandWindow(admin: Redis): Promise<() => Promise<CommandWindow>> {
  const serverBefore = await serverCommandSnapshot(admin);
  const clientBefore = clientCommandSnapshot();
  return async () => {
    const clientAfter = clientCommandSnapshot();
    const serverAfter = await serverCommandSnapshot(admin);
    return { server: delta(serverAfter, serverBefore), client: delta(clientAfter, clientBefore) };
  };
}

/** `a=3 b=1` for the largest counts, divided by `per` (e.g. per lock). */
export function describeCounts(counts: CommandCounts, per: number, top = 5): string {
  return Object.entries(counts)
    .sort(([, a], [, b]) => b - a)
    .slice(0, top)
    .map(([name, calls]) => `${name}=${round(calls / per)}`)
    .join(' ');
}

function round(value: number): string {
  return value >= 10 ? value.toFixed(0) : value.toFixed(2).replace(/\.?0+$/, '');
}

/** Runs one EVAL whose body calls EXISTS, and reports whether commandstats counted that EXISTS. */
export async function verifyScriptCounting(admin: Redis): Promise<boolean> {
  const before = await serverCommandSnapshot(admin);
  await admin.eval("return redis.call('EXISTS', KEYS[1])", 1, 'bench:probe');
  const after = await serverCommandSnapshot(admin);
  return (after.exists ?? 0) - (before.exists ?? 0) === 1 && (after.eval ?? 0) > (before.eval ?? 0);
}
