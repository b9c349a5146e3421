import { readFileSync } from 'node:fs';

/**
 * CPU time of this process's main thread so far, ms, from `/proc` (10 ms ticks): unlike
 * `process.cpuUsage`, it leaves out the collector's and libuv's helper threads, so its share
 * of the wall time shows how long the main thread waited on Redis.
 */
export function mainThreadCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
