import { spawnSync } from 'node:child_process';
import type { RedisTarget } from './redis-target.js';
import type { ScenarioResult } from './results.js';

/**
 * Runs a scale scenario with the bench's Redis first for a CPU: its main thread in the realtime
 * FIFO class (root or CAP_SYS_NICE), set back afterwards. On 2 cores shared with the process
 * that holds the locks, the kernel otherwise deschedules Redis mid-command, and SLOWLOG and a
 * neighbour's wait count that time as the command's: a Redis on a host of its own sees none of
 * it. The scenario's notes say which way it ran.
 */
export async function withRedisFirst(
  target: RedisTarget,
  run: () => Promise<ScenarioResult>,
): Promise<ScenarioResult> {
  const first = target.pid !== undefined && chrt(['--fifo', '--pid', '1'], target.pid);
  try {
    const result = await run();
    const how = first
      ? 'Redis ran first for a CPU (its main thread in the realtime FIFO class, chrt), so that SLOWLOG and the neighbour time Redis, not its waits for a CPU.'
      : 'Redis could not be put first for a CPU (chrt refused, or REDIS_URL): its waits for a CPU count in SLOWLOG and in the neighbour’s figures.';
    return { ...result, notes: [...result.notes, how] };
  } finally {
    if (first) chrt(['--other', '--pid', '0'], target.pid!);
  }
}

function chrt(args: string[], pid: number): boolean {
  return spawnSync('chrt', [...args, String(pid)]).status === 0;
}
