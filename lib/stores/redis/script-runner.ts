import type { CommandSender, RedisArg } from './command-sender.js';
import type { LuaScript } from './scripts/lua-script.js';

/**
 * Runs a script by its SHA (one small round trip), and falls back to sending the body when the
 * server answers NOSCRIPT (first use, after a restart or a SCRIPT FLUSH). The fallback also
 * loads the script, so the next call is an EVALSHA again. `read` turns the reply into the
 * caller's value as the reply is parsed.
 */
export function runScript<T = unknown>(
  send: CommandSender,
  script: LuaScript,
  keys: readonly string[],
  args: readonly RedisArg[],
  read?: (reply: unknown) => T,
): Promise<T> {
  const command = [script.sha, keys.length, ...keys, ...args];
  const retry = (error: unknown): Promise<T> => {
    if (!isNoScript(error)) throw error;
    command[0] = script.body;
    return send('eval', command, read) as Promise<T>;
  };
  return send('evalsha', command, read).catch(retry) as Promise<T>;
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
