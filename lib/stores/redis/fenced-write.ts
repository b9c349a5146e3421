import {
  LockOptionsError,
  LockStoreRefusedError,
  StaleFenceError,
  type LockStoreRefusal,
} from '../../errors/lock.errors.js';
import { asStoreError } from '../store-refusals.js';
import { randomUUID } from 'node:crypto';
import { FENCED_WRITE } from './scripts/fenced-write.scripts.js';
import { COMPANION_SEPARATOR, companionKey } from './redis-commands.js';
import { cachedPortOf, type RedisClient } from './redis-clients.js';

/**
 * The most writes one `fencedWrite` call carries. They run in one script, which Redis serves
 * nobody else during; send more as several calls, each with its own id.
 */
export const MAX_FENCED_WRITES = 100;

/** One Redis write command: `[command, key, ...arguments]`, e.g. `['HSET', 'orders', id, user]`. */
export type RedisWrite = readonly [command: string, key: string, ...args: (string | number)[]];

export interface FencedWrite {
  /** The writer's fencing token: `lock.fence` of a lock taken with `fencing: true`. */
  readonly fence: number | undefined;
  /**
   * Where the newest fence applied to this resource is kept. In Redis Cluster, give it the
   * same hash tag as the written keys (e.g. `stock:{42}:fence` next to `stock:{42}`).
   */
  readonly fenceKey: string;
  /**
   * Applied atomically, in order, if and only if the fence is not stale. At most
   * {@link MAX_FENCED_WRITES}; each costs Redis what the command itself costs.
   */
  readonly writes: readonly RedisWrite[];
  /**
   * Names this write, so that sending it again applies nothing and returns the first result.
   * A client may resend commands whose reply a dropped connection lost; pass your own id (an order
   * id, a message id) to make your own retries safe too. Ids are remembered per resource while
   * its fence stays the same (up to 1000, all forgotten past that, and 10 minutes after the last
   * write).
   * @default a new random id per call: a resend is safe, a retry by a new call is not
   */
  readonly id?: string;
}

/**
 * Applies `writes` atomically only if `fence` is at least the newest fence already applied
 * through `fenceKey`, and records it. Throws `StaleFenceError` otherwise, writing nothing.
 *
 * This is what makes a lock safe against a holder that pauses (GC, SIGSTOP, a slow disk) past
 * its lease: by the time it writes, a newer holder has a higher fence and has written, so the
 * stale write is refused at the resource. Resolves with the replies of the writes.
 */
export async function fencedWrite(
  redis: RedisClient,
  { fence, fenceKey, writes, id = randomUUID() }: FencedWrite,
): Promise<unknown[]> {
  checkFencedWrite(fence, fenceKey, writes, id);
  const keys = [fenceKey, companionKey(fenceKey, 'writes'), ...writes.map(([, key]) => key)];
  const args: (string | number)[] = [fence!, id];
  for (const [command, , ...rest] of writes) args.push(command, rest.length, ...rest);
  const port = cachedPortOf(redis);
  const [outcome, detail] = (await port.script(FENCED_WRITE, keys, args).catch((error: unknown) => {
    throw refusalOf(error, fenceKey);
  })) as [number, unknown];
  if (outcome === 0) throw new StaleFenceError(fenceKey, fence!, Number(detail));
  return outcome === 2
    ? (fromLua(JSON.parse(detail as string)) as unknown[])
    : (detail as unknown[]);
}

/** Refusals of the server's configuration: what the user's own writes fail with is theirs. */
const CONFIGURATION: ReadonlySet<LockStoreRefusal> = new Set([
  'authentication',
  'permission',
  'read-only',
  'no-script',
  'unknown-command',
]);

/**
 * A failed fenced write as its caller hears it: a refusal of the server's configuration (an
 * ACL user without a grant it needs, say) as `LockStoreRefusedError`, naming the grant; any
 * other error, such as one of the caller's own writes, as Redis gave it.
 */
function refusalOf(error: unknown, fenceKey: string): unknown {
  const keys = `the fence key "${fenceKey}", its write ids and the keys your writes touch`;
  const refused = asStoreError(error, fenceKey, 'fencedWrite', '', keys);
  return refused instanceof LockStoreRefusedError && CONFIGURATION.has(refused.refusal)
    ? refused
    : error;
}

/** A reply kept as JSON by the script, as a client gives it: nil and status replies. */
function fromLua(value: unknown): unknown {
  if (value === false) return null;
  if (Array.isArray(value)) return value.map(fromLua);
  if (value !== null && typeof value === 'object') {
    const { ok } = value as { ok?: unknown };
    // cjson writes an empty Lua table (an empty array reply) as an object.
    return ok === undefined ? [] : ok;
  }
  return value;
}

function checkFencedWrite(
  fence: unknown,
  fenceKey: unknown,
  writes: readonly RedisWrite[],
  id: unknown,
): void {
  if (typeof fence !== 'number' || !Number.isSafeInteger(fence) || fence < 1) {
    throw new LockOptionsError(
      `fencedWrite needs the lock's fence, got ${String(fence)}. Acquire the lock with \`fencing: true\`.`,
    );
  }
  if (typeof fenceKey !== 'string' || fenceKey.length === 0) {
    throw new LockOptionsError('fencedWrite needs a non-empty "fenceKey".');
  }
  // The separator names the library's companion keys (see redis-commands.ts), never a user's key.
  if (fenceKey.includes(COMPANION_SEPARATOR)) {
    throw new LockOptionsError(
      'fencedWrite "fenceKey" must not contain the control character \\x1f.',
    );
  }
  if (typeof id !== 'string' || id.length === 0) {
    throw new LockOptionsError('fencedWrite "id", when given, must be a non-empty string.');
  }
  const valid = (write: RedisWrite): boolean =>
    Array.isArray(write) &&
    typeof write[0] === 'string' &&
    typeof write[1] === 'string' &&
    write[1].length > 0;
  if (Array.isArray(writes) && writes.length > MAX_FENCED_WRITES) {
    throw new LockOptionsError(
      `fencedWrite takes at most ${MAX_FENCED_WRITES} writes (MAX_FENCED_WRITES), got ${writes.length}. ` +
        'Split them into several calls, each with its own id.',
    );
  }
  if (!Array.isArray(writes) || writes.length === 0 || !writes.every(valid)) {
    throw new LockOptionsError(
      'fencedWrite needs "writes": a non-empty array of [command, key, ...args].',
    );
  }
}
