import type { Cluster, Redis } from 'ioredis';
import {
  backlogOf,
  commandSender,
  internalsOf,
  socketOf,
  type ClientSocket,
  type RedisArg,
  type ReplyReader,
} from './ioredis-internals.js';
import type { LuaScript } from './scripts/lua-script.js';
import type { AcquireAttempt, ReleaseReport } from '../lock-store.interface.js';

/*
 * The store's Redis commands: how they are sent (corked writes, scripts by SHA), what the
 * scripts' replies mean, and the names of the companion keys they touch.
 */

export type { RedisArg, ReplyReader };
/** Sends one command and resolves its reply, read by `read` when given. */
export type CommandSender = (
  command: string,
  args: readonly RedisArg[],
  read?: ReplyReader,
) => Promise<unknown>;

/**
 * Commands awaiting replies on the connection before a new one is held back (`cork`) to share
 * a socket write. A write that finds Redis asleep wakes it, and that wake-up can be most of a
 * write's cost; with this many commands ahead of it, Redis is still busy when the held-back
 * bytes leave, so holding them costs it no idle time. With fewer, Redis would run dry while
 * Node holds them, and Node would then wait on Redis. The rule was chosen by measurement (see
 * "Design decisions these figures rest on" in bench/RESULTS.md).
 */
export const CORK_BACKLOG = 3;

/**
 * Most commands held back for one write: a quarter of the backlog, so that Redis gets the next
 * batch before it has worked through the last (at least `CORK_BACKLOG`). Deep backlogs (64
 * workers) thus leave in big writes, and shallow ones in small writes that keep both busy.
 */
export function corkBatch(backlog: number): number {
  return Math.max(CORK_BACKLOG, backlog >> 2);
}

/** When to hold commands back, and how many per write. */
export interface CorkRule {
  /** Commands awaiting replies before a new one is held back. */
  readonly backlog: number;
  /** Most commands held back for one write, given the backlog found. */
  readonly batch: (backlog: number) => number;
}

const LIBRARY_CORK_RULE: CorkRule = { backlog: CORK_BACKLOG, batch: corkBatch };

/**
 * Sends each command in its own socket write, as the client's own methods do (same key prefix,
 * same reply encoding), with its reply read on arrival (see ioredis-internals.ts).
 */
export function directSender(client: Redis | Cluster): CommandSender {
  return commandSender(client);
}

/**
 * Sends a command at once while Redis has little else to do; but while `CORK_BACKLOG` or more
 * commands on this connection await their replies (many locks at once), the socket holds the
 * bytes (`cork`) until a batch (`corkBatch`) is waiting or the promise callbacks of this tick
 * have run, so they leave in one write system call instead of one each. Order on the
 * connection is unchanged. Without the `cork` internals (see ioredis-internals.ts), every
 * command leaves in its own write.
 */
export function corkingSender(client: Redis, rule: CorkRule = LIBRARY_CORK_RULE): CommandSender {
  const send = directSender(client);
  if (!internalsOf(client).cork) return send;
  /** The socket now corked (captured: a reconnect mid-tick brings a new one), if any. */
  let corked: ClientSocket | undefined;
  let batched = 0;
  let batch = 0;
  let tickEndPending = false;
  const uncork = (): void => {
    corked?.uncork();
    corked = undefined;
  };
  const endOfTick = (): void => {
    tickEndPending = false;
    uncork();
  };
  return (command, args, read) => {
    if (corked && ++batched > batch) uncork();
    if (!corked) {
      const backlog = backlogOf(client);
      if (backlog >= rule.backlog && client.status === 'ready') corked = socketOf(client);
      if (corked) {
        corked.cork();
        batched = 1;
        batch = rule.batch(backlog);
        if (!tickEndPending) {
          tickEndPending = true;
          process.nextTick(endOfTick);
        }
      }
    }
    return send(command, args, read);
  };
}

// Scripts, sent by SHA, and their replies read into the store's results.

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

// Key names: the companions of a lock key.

/**
 * Separates a lock key from the name of one of its companion keys. It is a control character
 * (ASCII unit separator): key validation refuses those in lock keys and in the key prefix, so no
 * lock key contains it, and no lock key can name a companion key.
 */
export const COMPANION_SEPARATOR = '\x1f';

/** The companions of a lock key; the names only ever follow the separator. */
export type CompanionName =
  'fence' | 'turns' | 'writer' | 'released' | 'writes' | 'owners' | 'forced';

/**
 * Names an auxiliary key (fence counter, turn list, release channel) so that Redis Cluster
 * hashes it to the same slot as its lock key. A key without a hash tag becomes the tag itself,
 * since `{k}x` hashes exactly like `k` when `k` has no tag: `{lock:a}␟fence`. A key with a tag
 * (or a stray `}`) keeps it, and its name follows a doubled separator: `lock:{t}:a␟␟fence`. The
 * doubling tells the two forms apart, so `{lock:a}` (a key whose tag is all of it) and `lock:a`
 * get different companions: every companion names exactly one lock key.
 */
export function companionKey(lockKey: string, name: CompanionName): string {
  const sep = COMPANION_SEPARATOR;
  if (hashTagOf(lockKey) !== lockKey || lockKey.includes('}'))
    return `${lockKey}${sep}${sep}${name}`;
  return `{${lockKey}}${sep}${name}`;
}

export const fenceKeyOf = (lockKey: string): string => companionKey(lockKey, 'fence');
export const channelOf = (lockKey: string): string => companionKey(lockKey, 'released');
export const turnsKeyOf = (lockKey: string): string => companionKey(lockKey, 'turns');
export const writerKeyOf = (lockKey: string): string => companionKey(lockKey, 'writer');
/**
 * The channel every process of a key prefix hears forced releases on (see `FORCE_RELEASE`): a
 * companion of the prefix, in the slot of the prefix's owner registrations.
 */
export const forcedChannelOf = (prefix: string): string => companionKey(prefix, 'forced');

/** The part of the key Redis hashes: the first non-empty `{...}`, or the whole key. */
export function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}
