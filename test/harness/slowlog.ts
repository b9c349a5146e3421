import type { Redis } from 'ioredis';
import { figure } from './figures.js';

/** One command the server logged as slower than its threshold. */
export interface SlowCommand {
  /** The command's name in lower case; a script's is `evalsha` or `eval`. */
  readonly command: string;
  /** How long it held the server, in µs. */
  readonly micros: number;
}

/** From now on, logs every command that runs longer than `thresholdMicros`; forgets the rest. */
export async function watchSlowlog(probe: Redis, thresholdMicros: number): Promise<void> {
  await probe.config('SET', 'slowlog-log-slower-than', String(thresholdMicros));
  await probe.config('SET', 'slowlog-max-len', '10000');
  await probe.slowlog('RESET');
}

/**
 * The commands logged since the last call (or `watchSlowlog`), oldest first; the log is then
 * emptied. Redis 7 logs a script's inner commands as well as the script.
 */
export async function slowCommands(probe: Redis): Promise<SlowCommand[]> {
  const entries = (await probe.slowlog('GET', 10_000)) as [number, number, number, string[]][];
  await probe.slowlog('RESET');
  return entries
    .map(([, , micros, args]) => ({ command: String(args[0]).toLowerCase(), micros }))
    .reverse();
}

/** How long each script logged since the last call ran, in µs, oldest first. */
export async function slowScripts(probe: Redis): Promise<number[]> {
  return (await slowCommands(probe))
    .filter(({ command }) => command.startsWith('eval'))
    .map(({ micros }) => micros);
}

/**
 * The scripts logged since the last call that ran longer than `limitMicros` (the log must take
 * shorter ones: see `watchSlowlog`); the slowest of all is reported as the figure `label`.
 */
export async function scriptsOver(
  probe: Redis,
  limitMicros: number,
  label: string,
): Promise<number[]> {
  const micros = await slowScripts(probe);
  figure(`${label}: slowest script, µs`, Math.max(0, ...micros));
  return micros.filter((us) => us > limitMicros);
}
