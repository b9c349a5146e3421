import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/** What the server's SLOWLOG held at the end of a window. */
export interface SlowLogFigures {
  /** Commands that ran at least `limitUs`. */
  readonly over: number;
  /** The slowest command logged (µs); 0 when none reached the window's floor. */
  readonly slowestUs: number;
  /** That command's name and argument count, e.g. `evalsha (404 args)`. */
  readonly slowest: string;
  /**
   * Constant-time commands (a `GET` inside a script, a neighbour's `TIME`) logged at the floor or
   * more: no such command takes a millisecond unless Redis itself was held up (its host's CPU),
   * so these count the machine's stalls, which land on whatever command is running.
   */
  readonly stalls: number;
  /**
   * CPU time the hypervisor gave to other guests over the window (`steal` in /proc/stat, all
   * CPUs, 10 ms steps); NaN where it cannot be read. A Redis descheduled by its host logs its
   * command as slow, whatever the command does.
   */
  readonly stealMs: number;
}

type Entry = [number, number, number, string[]];

/**
 * Opens a SLOWLOG window: every command that runs `floorUs` or longer is logged (up to 10,000),
 * and the returned function reads them, counting those at `limitUs` or more, and puts the
 * server's settings back. The floor sits below the limit so that the slowest command is
 * reported even when none reaches the limit.
 */
export async function openSlowLog(
  admin: Redis,
  limitUs: number,
  floorUs = limitUs / 2,
): Promise<() => Promise<SlowLogFigures>> {
  const saved = await settings(admin);
  await admin.config('SET', 'slowlog-log-slower-than', String(floorUs));
  await admin.config('SET', 'slowlog-max-len', '10000');
  await admin.slowlog('RESET');
  const stealBefore = stolenMs();
  return async () => {
    const stealMs = stolenMs() - stealBefore;
    const entries = (await admin.slowlog('GET', -1)) as Entry[];
    await admin.config('SET', 'slowlog-log-slower-than', saved.threshold);
    await admin.config('SET', 'slowlog-max-len', saved.maxLen);
    const ours = entries.filter(([, , , args]) => !ADMIN.has(args[0]?.toLowerCase()));
    const slowest = ours.reduce<Entry | undefined>(
      (a, b) => (a && a[2] >= b[2] ? a : b),
      undefined,
    );
    return {
      over: ours.filter(([, , us]) => us >= limitUs).length,
      slowestUs: slowest?.[2] ?? 0,
      slowest: slowest ? `${slowest[3][0]?.toLowerCase()} (${slowest[3].length} args)` : '–',
      stalls: ours.filter(([, , , args]) => CONSTANT_TIME.has(args[0]?.toLowerCase())).length,
      stealMs,
    };
  };
}

const CONSTANT_TIME = new Set(['get', 'set', 'pexpire', 'pttl', 'exists', 'del', 'time', 'ping']);

// The bench's own probes, which can be slow (FLUSHALL of 100,000 keys) and are not the library's.
const ADMIN = new Set(['flushall', 'slowlog', 'config', 'info', 'dbsize', 'memory', 'scan']);

async function settings(admin: Redis): Promise<{ threshold: string; maxLen: string }> {
  const threshold = (await admin.config('GET', 'slowlog-log-slower-than')) as string[];
  const maxLen = (await admin.config('GET', 'slowlog-max-len')) as string[];
  return { threshold: threshold[1], maxLen: maxLen[1] };
}

/** The host's steal time since boot, all CPUs (ms); NaN off Linux. */
function stolenMs(): number {
  try {
    // cpu  user nice system idle iowait irq softirq steal …, in USER_HZ (100 a second).
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
    return Number(fields[8]) * 10;
  } catch {
    return NaN;
  }
}
