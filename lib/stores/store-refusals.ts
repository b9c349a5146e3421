import {
  LockError,
  LockStoreError,
  LockStoreRefusedError,
  type LockStoreRefusal,
} from '../errors/lock.errors.js';
import { scriptLine } from './redis/scripts/lua-script.js';

/**
 * The name of an error reply, as every Redis client adapter hands it to the store: an `Error`
 * with this name whose message is the reply's text as Redis wrote it (see
 * redis/redis-client.port.ts). ioredis's own `ReplyError` has that shape already.
 */
export const ERROR_REPLY = 'ReplyError';

/** An error reply of Redis, in the adapters' shape. */
export function isErrorReply(error: unknown): error is Error {
  return error instanceof Error && error.name === ERROR_REPLY;
}

/** An error reply in the adapters' shape: Redis's text, the client's error as the cause. */
export function errorReply(reply: string, cause?: unknown): Error {
  const error = new Error(reply, cause === undefined ? undefined : { cause });
  error.name = ERROR_REPLY;
  return error;
}

/**
 * A store call's failure as the caller hears it: a `LockError` as is; an error reply that
 * retrying cannot fix (credentials refused, NOPERM, WRONGTYPE, READONLY, a script error, a
 * NOSCRIPT that outlived the reload) as `LockStoreRefusedError`, naming what to grant or fix;
 * anything else as `LockStoreError`. `prefix` is the module's key prefix, which the ACL advice
 * names; `keyGrant`, what to grant for keys, when they are not the locks' (`fencedWrite`).
 */
export function asStoreError(
  error: unknown,
  key: string | undefined,
  what: string,
  prefix: string,
  keyGrant?: string,
): LockError {
  if (error instanceof LockError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  const refusal = storeRefusalOf(error, prefix, keyGrant);
  if (!refusal) return new LockStoreError(key, `${what} failed in the store: ${reason}`, error);
  const { kind, refused, advice } = refusal;
  const detail = `the store refused ${what}: ${advice} See node_modules/nestjs-distributed-lock/docs/acl.md. Redis said: ${reason}`;
  return new LockStoreRefusedError(key, detail, kind, refused, error);
}

/** An error reply that retrying cannot fix, read: what was refused and what to do about it. */
export interface StoreRefusal {
  readonly kind: LockStoreRefusal;
  /** What was refused, as an ACL rule names it: a command (`time`), `channel` or `key`. */
  readonly refused: string;
  /** What to grant or fix, for the error's message and the log. */
  readonly advice: string;
}

/**
 * The commands a mutex needs when nobody waits for it: SET NX PX takes it, and its scripts
 * (EVALSHA, or EVAL to load one) read its holder and lease (GET, PTTL), renew it (PEXPIRE) and
 * delete it (DEL); PING is the health check. Waiting across processes (lists, channels), fences
 * (TIME), holder sets (TYPE, Z…), `replicas` (WAIT) and inspection need more.
 */
const CORE_COMMANDS = new Set(['set', 'get', 'pttl', 'pexpire', 'del', 'evalsha', 'eval', 'ping']);

/**
 * Whether a refusal stops a plain mutex's acquire and release, for every key: a core command or
 * the lock keys refused (or a command the reply does not name), a read-only replica, a server
 * that keeps no scripts, a lock script that failed. Otherwise it stops one feature (fencing,
 * semaphores and read-write locks, notifications across processes, `replicas`), or one key
 * holding a value the library did not write (WRONGTYPE), and the mutex still works.
 */
export function refusesCorePath({
  kind,
  refused,
}: Pick<StoreRefusal, 'kind' | 'refused'>): boolean {
  if (kind === 'wrong-type') return false;
  if (kind !== 'permission' && kind !== 'unknown-command') return true;
  return refused === 'key' || refused === 'command' || CORE_COMMANDS.has(refused);
}

/*
 * The replies of Redis 7.0 and of later versions, which reworded the ACL failures in scripts.
 * Only these prefixes are refusals: OOM, BUSY, LOADING, MASTERDOWN, TRYAGAIN and CLUSTERDOWN
 * pass with time, and stay plain store failures.
 */
const PERMISSION = /^NOPERM|^ERR The user executing the script can't|^ERR ACL failure in script/;
const NAMED_COMMAND = /permissions to run the '([^']+)' command/;
const SCRIPT_PLACE = /script: ([0-9a-f]{40}), on @user_script:(\d+)/;
const SCRIPT_ERROR =
  /^ERR (user_script:\d+:|Error running script|Unknown Redis command called from script)/;
const UNKNOWN_COMMAND = /^ERR unknown command '([^']+)'/;
/** Redis's answers to credentials it does not accept, or to a connection that gave none. */
const AUTHENTICATION =
  /^(WRONGPASS|NOAUTH)|^ERR (invalid (username-)?password|AUTH <password> called without|Client sent AUTH)/;

/**
 * Whether `error` is Redis refusing the connection's credentials (a wrong password, a disabled
 * ACL user, none given where one is required): a misconfiguration, not an outage.
 */
export function isAuthenticationRefusal(error: unknown): boolean {
  return isErrorReply(error) && AUTHENTICATION.test(error.message);
}

/**
 * Reads an error reply the store answered with (see `isErrorReply`) as a refusal, or
 * `undefined` when it is not one (a timeout, a lost connection, a reply that time can change).
 * `prefix` is the module's key prefix, which the advice on keys and channels names.
 */
export function storeRefusalOf(
  error: unknown,
  prefix: string,
  keyGrant = `~${prefix}* and ~{${prefix}*`,
): StoreRefusal | undefined {
  if (!isErrorReply(error)) return undefined;
  const reply = error.message;
  if (AUTHENTICATION.test(reply)) {
    const advice =
      'Redis did not accept the credentials of the lock connection: check its username and password, and that the ACL user is on.';
    return { kind: 'authentication', refused: 'auth', advice };
  }
  if (PERMISSION.test(reply)) return permission(reply, prefix, keyGrant);
  if (reply.startsWith('WRONGTYPE')) return wrongType(prefix);
  if (reply.startsWith('READONLY')) {
    const advice =
      'the connection is to a read-only replica: point the module at the master (or at Sentinel).';
    return { kind: 'read-only', refused: 'write', advice };
  }
  if (reply.startsWith('NOSCRIPT')) {
    const advice =
      'the server keeps no scripts even after EVAL sent one (a proxy in between?): the locks need EVALSHA and EVAL on a server that caches scripts.';
    return { kind: 'no-script', refused: 'evalsha', advice };
  }
  const unknown = UNKNOWN_COMMAND.exec(reply)?.[1];
  if (unknown !== undefined) return unknownCommand(unknown.toLowerCase());
  if (SCRIPT_ERROR.test(reply)) return scriptError(reply);
  return undefined;
}

/** NOPERM: a command, a key or a channel, in a script or not. */
function permission(reply: string, prefix: string, keyGrant: string): StoreRefusal {
  if (/channel/i.test(reply)) {
    const advice = `the ACL user may not use the locks' release channels: grant &{${prefix}* and &${prefix}* (keys with a hash tag, such as {stock}:1, use the second).`;
    return { kind: 'permission', refused: 'channel', advice };
  }
  if (/\bkeys?\b/i.test(reply)) {
    const advice = `the ACL user may not touch the keys: grant ${keyGrant}.`;
    return { kind: 'permission', refused: 'key', advice };
  }
  const command = NAMED_COMMAND.exec(reply)?.[1] ?? commandInScript(reply);
  if (command === undefined) {
    const advice =
      'the ACL user may not run a command of a lock script: see ACL LOG, and grant it.';
    return { kind: 'permission', refused: 'command', advice };
  }
  const where = inScript(reply);
  const advice = `the ACL user may not run ${command.toUpperCase()}${where}: grant +${command}.`;
  return { kind: 'permission', refused: command, advice };
}

function wrongType(prefix: string): StoreRefusal {
  const advice = `a lock key holds a value the library did not write: something else writes keys under the prefix "${prefix}". Give the locks a keyPrefix of their own.`;
  return { kind: 'wrong-type', refused: 'key', advice };
}

function unknownCommand(command: string): StoreRefusal {
  const advice = `the server has no ${command.toUpperCase()} command (renamed or disabled): enable it.`;
  return { kind: 'unknown-command', refused: command, advice };
}

function scriptError(reply: string): StoreRefusal {
  const command = commandInScript(reply);
  if (reply.includes('Unknown Redis command') && command !== undefined) {
    return unknownCommand(command);
  }
  const line = SCRIPT_PLACE.exec(reply)?.[2] ?? '?';
  const advice = `a lock script failed${inScript(reply)}. Report it, with the Redis version.`;
  return { kind: 'script', refused: `script line ${line}`, advice };
}

/** The command on the script line the reply names, lower-cased as in an ACL rule. */
function commandInScript(reply: string): string | undefined {
  const line = scriptLineOf(reply);
  return line && /redis\.p?call\('(\w+)'/.exec(line)?.[1]?.toLowerCase();
}

/** ` (in a lock script, line 8: \`…\`)`, or nothing when the reply names no known script. */
function inScript(reply: string): string {
  const place = SCRIPT_PLACE.exec(reply);
  const line = scriptLineOf(reply);
  return place && line ? ` (in a lock script, line ${place[2]}: \`${line}\`)` : '';
}

function scriptLineOf(reply: string): string | undefined {
  const place = SCRIPT_PLACE.exec(reply);
  return place ? scriptLine(place[1], Number(place[2])) : undefined;
}
