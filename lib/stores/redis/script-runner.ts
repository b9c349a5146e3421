import type { CommandSender, RedisArg } from './command-sender.js';
import type { LuaScript } from './redis-lock.scripts.js';

/**
 * Runs a script by its SHA (one small round trip), and falls back to sending the body when the
 * server answers NOSCRIPT (first use, after a restart or a SCRIPT FLUSH). The fallback also
 * loads the script, so the next call is an EVALSHA again.
 */
export async function runScript(
  send: CommandSender,
  script: LuaScript,
  keys: readonly string[],
  args: readonly RedisArg[],
): Promise<unknown> {
  try {
    return await send('evalsha', [script.sha, keys.length, ...keys, ...args]);
  } catch (error) {
    if (!isNoScript(error)) throw error;
    return send('eval', [script.body, keys.length, ...keys, ...args]);
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
