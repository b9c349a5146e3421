import type { CommandSender, RedisArg } from './command-sender.js';
import type { LuaScript } from './redis-lock.scripts.js';

/**
 * Runs a script by its SHA (one small round trip), and falls back to sending the body when the
 * server answers NOSCRIPT (first use, after a restart or a SCRIPT FLUSH). The fallback also
 * loads the script, so the next call is an EVALSHA again.
 */
export function runScript(
  send: CommandSender,
  script: LuaScript,
  keys: readonly string[],
  args: readonly RedisArg[],
): Promise<unknown> {
  const command = [script.sha, keys.length, ...keys, ...args];
  return send('evalsha', command).catch((error: unknown) => {
    if (!isNoScript(error)) throw error;
    command[0] = script.body;
    return send('eval', command);
  });
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
