import type { AcquireAttempt, ReleaseReport } from '../lock-store.interface.js';

/*
 * What the store's scripts' replies mean, and the names of the companion keys they touch. How
 * commands are sent is each client adapter's (see redis-client.port.ts).
 */

export type { CommandSender, RedisArg, ReplyReader } from './redis-client.port.js';

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
