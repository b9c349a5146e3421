import type { CommandSender, RedisArg } from './command-sender.js';
import type { LuaScript } from './scripts/lua-script.js';
import type { AcquireAttempt, ReleaseReport } from '../lock-store.interface.js';

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

// The Redis store's script replies, read into its results.

/** A release's outcome code (see `releaseReport`) as its result. */
const releaseOutcome = { 1: 'released', 0: 'expired', [-1]: 'stolen' } as const;
/** EXTEND's code for one key as its result. */
export const extendOutcome = { 1: 'extended', 0: 'expired', [-1]: 'stolen' } as const;
/** A won attempt without fences: one frozen object serves every uncontended lock. */
export const ACQUIRED: AcquireAttempt = Object.freeze({ acquired: true });

/**
 * RELEASE's integer reply (see its comment) as a report. `othersAmong(subscribers)` says
 * whether some of the release channel's subscribers are in other processes.
 */
export function releaseReport(
  reply: number,
  othersAmong: (subscribers: number) => boolean,
): ReleaseReport {
  const subscribers = Math.floor(reply / 16);
  return {
    result: releaseOutcome[((reply % 4) - 1) as 1 | 0 | -1],
    succeeded: (reply & 4) !== 0,
    waitersElsewhere: (reply & 8) !== 0 || (subscribers > 0 && othersAmong(subscribers)),
  };
}

/** An acquire script's reply, {1, fences...}, {0, pttl} or {-1, held_as}, as an attempt. */
export function attemptOf(reply: unknown, fencing: boolean): AcquireAttempt {
  const codes = reply as number[];
  if (codes[0] === -1) return heldAs(codes[1] as unknown as string);
  if (codes[0] !== 1) return { acquired: false, pttl: codes[1] };
  return fencing ? { acquired: true, fences: codes.slice(1) } : ACQUIRED;
}

/**
 * A refusal for a key held as another kind of lock, from the scripts' `held_as`: 'MUTEX', 'RW'
 * or 'L' .. limit (see holder-set.scripts.ts).
 */
export function heldAs(code: string): AcquireAttempt {
  const conflict =
    code === 'MUTEX'
      ? 'a mutex'
      : code === 'RW'
        ? 'a read-write lock'
        : `a semaphore of limit ${code.slice(1)}`;
  return { acquired: false, pttl: -1, conflict };
}

/** The letter before a holder's token in a holder set, by kind. */
export const memberLetter = { semaphore: 's', read: 'r', write: 'w' } as const;
