import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

/*
 * SLOWLOG times a command from its start to its end, so its times include any wait of Redis for
 * a CPU meanwhile. Here Redis shares the machine's cores with the process that holds the locks,
 * whose threads deschedule it even on an idle machine, which no Redis on a host of its own sees.
 * So Redis gets a CPU whenever it has work, and SLOWLOG times the commands.
 */

export type RedisFirst = 'realtime Redis' | 'lowest-priority worker' | 'none';

/**
 * Puts Redis's main thread in the realtime FIFO class, where the kernel allows it (root, or
 * CAP_SYS_NICE); otherwise lowers every thread of `workerPid` to nice 19 (threads started
 * later inherit it), which leaves Redis shorter waits but not none. Returns which, for the
 * failure message.
 */
export function redisFirst(redisPid: number, workerPid: number): RedisFirst {
  if (realtimeRedis(redisPid)) return 'realtime Redis';
  try {
    for (const thread of readdirSync(`/proc/${workerPid}/task`)) setPriority(Number(thread), 19);
    return 'lowest-priority worker';
  } catch {
    return 'none';
  }
}

/** Puts Redis's main thread in the realtime FIFO class; false where the kernel refuses. */
export function realtimeRedis(redisPid: number): boolean {
  return spawnSync('chrt', ['--fifo', '--pid', '1', String(redisPid)]).status === 0;
}

/**
 * Starts counting the ms that thread `pid` is runnable but waits for a CPU (Linux's schedstat):
 * what tells a busy machine from a slow command. NaN where the kernel does not say.
 */
export function cpuWait(pid: number | undefined): () => number {
  const read = (): number => {
    try {
      return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
    } catch {
      return NaN;
    }
  };
  const start = read();
  return () => Math.round(read() - start);
}
