import type { AcquireAttempt, AcquireRequest, LockKind } from '../lock-store.interface.js';
import { attemptOf, memberLetter } from './redis-commands.js';
import type { RedisClientPort } from './redis-client.port.js';
import { fenceKeyOf, turnsKeyOf, writerKeyOf } from './redis-commands.js';
import { ACQUIRE, ACQUIRE_IN_TURN } from './scripts/acquire.scripts.js';
import { ACQUIRE_HOLDER } from './scripts/holder-set.scripts.js';

/**
 * The attempts that run a script: a mutex with a fence, several keys or a queue in line, and
 * every semaphore and read-write lock. The plain mutex is a `SET NX PX` (see `RedisLockStore`).
 */

/**
 * A mutex attempt by script. A single key tried for a listening queue (`queue` given) takes its
 * turn; several keys enter the turn lists of the busy ones.
 */
export function acquireMutex(
  port: RedisClientPort,
  request: AcquireRequest,
): Promise<AcquireAttempt> {
  const { keys, token, ttl, fencing, queue } = request;
  const read = (codes: unknown): AcquireAttempt => attemptOf(codes, fencing);
  const fenced = fencing ? '1' : '0';
  if (keys.length === 1 && queue !== undefined && request.takesTurns !== false) {
    const scriptKeys = [keys[0], turnsKeyOf(keys[0]), ...(fencing ? [fenceKeyOf(keys[0])] : [])];
    return port.script(ACQUIRE_IN_TURN, scriptKeys, [token, ttl, queue, fenced], read);
  }
  const scriptKeys = [...keys];
  const args = [token, ttl, fenced];
  if (fencing) scriptKeys.push(...keys.map(fenceKeyOf));
  if (queue !== undefined) {
    scriptKeys.push(...keys.map(turnsKeyOf));
    args.push(queue);
  }
  return port.script(ACQUIRE, scriptKeys, args, read);
}

/** A semaphore's or read-write lock's attempt: a place in the key's holder set. */
export function acquireHolder(
  port: RedisClientPort,
  { keys: [key], token, ttl, fencing, queue, patience }: AcquireRequest,
  kind: Exclude<LockKind, { type: 'mutex' }>,
): Promise<AcquireAttempt> {
  const scriptKeys = [key, turnsKeyOf(key), writerKeyOf(key), fenceKeyOf(key)];
  const limitOrPatience = kind.type === 'semaphore' ? kind.limit : (patience ?? '');
  const member = memberLetter[kind.type] + token;
  const args = [member, ttl, limitOrPatience, fencing ? '1' : '0', queue ?? ''];
  return port.script(ACQUIRE_HOLDER, scriptKeys, args, (codes) => attemptOf(codes, fencing));
}
