import { Redis } from 'ioredis';

/**
 * Counts Redis commands two ways. The server's `INFO commandstats` counts every command it ran,
 * including those a Lua script ran (Redis 7 does: `verifyScriptCounting` checks it at start).
 * The client-side tally counts only what the clients sent (top-level calls: EVALSHA, SET, ...):
 * ioredis's here, node-redis's and GLIDE's through `tally` (contenders/client-connections.ts).
 * Their difference is the work done inside scripts. A window also reads the CPU time of both
 * sides: this process (every thread, GLIDE's included) and the Redis server.
 */
export type CommandCounts = Record<string, number>;

// The bench's own probes: left out of every total. PING too, where a neighbour process pings
// during the window (scenario 7); scenarios whose locks may PING count it (`countPings`).
const PROBES = ['info', 'config|resetstat', 'flushall', 'dbsize'];
const EXCLUDED = new Set([...PROBES, 'ping']);
const PROBES_ONLY = new Set(PROBES);

const sentByThisProcess = new Map<string, number>();
let patched = false;

/** Adds one command `name` to this process's client-side tally. */
export function tally(name: string): void {
  sentByThisProcess.set(name, (sentByThisProcess.get(name) ?? 0) + 1);
}

/** Whether this process tallies its commands (node-redis and GLIDE hook in when they connect). */
export function countingClients(): boolean {
  return patched;
}

/** Wraps ioredis' single send path once, so every command this process sends is tallied. */
export function countClientCommands(): void {
  if (patched) return;
  patched = true;
  const proto = Redis.prototype as unknown as {
    sendCommand: (command: { name: string }, ...rest: unknown[]) => unknown;
  };
  const original = proto.sendCommand;
  proto.sendCommand = function (this: unknown, command, ...rest) {
    tally(command.name.toLowerCase());
    return original.call(this, command, ...rest);
  };
}

export function clientCommandSnapshot(): CommandCounts {
  return Object.fromEntries(sentByThisProcess);
}

export async function serverCommandSnapshot(admin: Redis): Promise<CommandCounts> {
  return commandsOf(await admin.info('commandstats'));
}

function commandsOf(info: string): CommandCounts {
  const counts: CommandCounts = {};
  for (const line of info.split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (match) counts[match[1]] = Number(match[2]);
  }
  return counts;
}

/** The server's CPU time so far, µs: its user and system time (INFO cpu). */
function serverCpuUsOf(info: string): number {
  const seconds = (name: string): number =>
    Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6;
}

function processCpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

export function delta(
  after: CommandCounts,
  before: CommandCounts,
  excluded: ReadonlySet<string> = EXCLUDED,
): CommandCounts {
  const result: CommandCounts = {};
  for (const [name, calls] of Object.entries(after)) {
    const diff = calls - (before[name] ?? 0);
    if (diff > 0 && !excluded.has(name)) result[name] = diff;
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
  /** CPU time spent in the window, µs, by this process (all its threads) and by Redis. */
  readonly cpu: { readonly processUs: number; readonly redisUs: number };
}

/**
 * Opens a window; the returned function closes it. Children's client tallies are added by
 * callers. `countPings`: the window's PINGs are the locks' own (redlock-universal's health check
 * sends one before a new lock's first SET), not a probe's.
 */
export async function openCommandWindow(
  admin: Redis,
  { countPings = false } = {},
): Promise<() => Promise<CommandWindow>> {
  const excluded = countPings ? PROBES_ONLY : EXCLUDED;
  const serverBefore = await serverInfo(admin);
  const clientBefore = clientCommandSnapshot();
  const processBefore = processCpuUs();
  return async () => {
    const processUs = processCpuUs() - processBefore;
    const clientAfter = clientCommandSnapshot();
    const serverAfter = await serverInfo(admin);
    return {
      server: delta(commandsOf(serverAfter), commandsOf(serverBefore), excluded),
      client: delta(clientAfter, clientBefore, excluded),
      cpu: { processUs, redisUs: serverCpuUsOf(serverAfter) - serverCpuUsOf(serverBefore) },
    };
  };
}

/** INFO's commandstats and cpu sections in one call (Redis 7 takes several sections). */
function serverInfo(admin: Redis): Promise<string> {
  return admin.call('INFO', 'commandstats', 'cpu') as Promise<string>;
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
