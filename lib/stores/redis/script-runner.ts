import type { CommandSender, ScriptRunner } from './redis-client.port.js';

/**
 * Runs scripts by SHA over any adapter's command sender, sending the body (EVAL) when the server
 * does not have the script (NOSCRIPT: first use, a restart, a SCRIPT FLUSH), which also loads it
 * for the next call. One copy for every client library: only how a command is sent differs.
 */
export function scriptRunner(send: CommandSender): ScriptRunner {
  return (script, keys, args, read) => {
    const command = [script.sha, keys.length, ...keys, ...args];
    const retry = (error: unknown): Promise<never> => {
      if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
      command[0] = script.body;
      return send('eval', command, read) as Promise<never>;
    };
    return send('evalsha', command, read).catch(retry) as Promise<never>;
  };
}
