import type { LockOwner, OwnerRegistration } from '../lock-inspection.interface.js';
import { inLibraryScope } from '../library-scope.js';
import { companionKey, COMPANION_SEPARATOR } from './redis-commands.js';
import { clusterSlot } from './cluster-slots.js';
import type { RedisClientPort } from './redis-client.port.js';

/**
 * How long a registration outlives its last renewal, in ms. A process that died without
 * unregistering stops naming its locks' owner this long after, by which time its locks, renewed
 * by nobody, have usually expired too.
 */
export const REGISTRATION_TTL = 60_000;

/** How often a live process renews its registration: three chances before it lapses. */
export const REGISTRATION_RENEWAL = REGISTRATION_TTL / 3;

/**
 * Where a process registers, beside the locks of its key prefix: a companion name of the
 * prefix (see redis-commands.ts), then the process id. Lock keys hold no control character, so none
 * can name it; `list` skips it with every companion key. The prefix is the hash tag, so on a
 * Cluster every registration of a prefix shares one slot and one MGET reads them all.
 */
export function registrationKeyOf(prefix: string, processId: string): string {
  return `${companionKey(prefix, 'owners')}${COMPANION_SEPARATOR}${processId}`;
}

/**
 * The registrations of this process still open, by key. Two modules of one process with one
 * prefix share the key (tokens name the process, not the module): only the last to close
 * deletes it. Keyed by name alone, a module on another Redis with the same prefix only delays a
 * deletion, and the registration then lapses by itself.
 */
const openRegistrations = new Map<string, number>();

/**
 * Writes the registration now and again every `REGISTRATION_RENEWAL` ms, always with an expiry,
 * from an unref'd timer in the library's scope: it neither keeps the process alive nor runs in
 * the context of the caller that started it. A write that fails (Redis down) is simply made
 * again at the next renewal. The returned function stops it and deletes the registration,
 * unless another module of this process still has it open.
 */
export function registerOwner(
  port: RedisClientPort,
  { id, owner, prefix }: OwnerRegistration,
): () => Promise<void> {
  const key = registrationKeyOf(prefix, id);
  const value = JSON.stringify(owner);
  const write = (): void => {
    port.send('set', [key, value, 'PX', REGISTRATION_TTL]).catch(() => undefined);
  };
  const timer = inLibraryScope(() => {
    write();
    return setInterval(write, REGISTRATION_RENEWAL).unref();
  });
  openRegistrations.set(key, (openRegistrations.get(key) ?? 0) + 1);
  let closed = false;
  return async () => {
    clearInterval(timer);
    if (closed) return;
    closed = true;
    const open = openRegistrations.get(key)! - 1;
    if (open > 0) return void openRegistrations.set(key, open);
    openRegistrations.delete(key);
    // Sent, not awaited: on a connection that is down, a client may hold the DEL (and shutdown
    // with it) until it gave up. Up, the QUIT that closes an owned client follows it on the same
    // connection; down, the registration lapses by itself.
    port.send('del', [key]).catch(() => undefined);
  };
}

/**
 * The owners of `processIds` still registered under `prefix`: one MGET (per slot on a Cluster,
 * which a prefix without a hash tag of its own can spread them over).
 */
export async function ownersOf(
  port: RedisClientPort,
  prefix: string,
  processIds: Iterable<string>,
): Promise<Map<string, LockOwner>> {
  const owners = new Map<string, LockOwner>();
  const bySlot = new Map<number, string[]>();
  for (const id of new Set(processIds)) {
    const slot = clusterSlot(registrationKeyOf(prefix, id));
    bySlot.set(slot, [...(bySlot.get(slot) ?? []), id]);
  }
  await Promise.all(
    [...bySlot.values()].map(async (ids) => {
      const keys = ids.map((id) => registrationKeyOf(prefix, id));
      const values = (await port.send('mget', keys)) as (string | null)[];
      ids.forEach((id, i) => {
        const owner = parseOwner(values[i]);
        if (owner) owners.set(id, owner);
      });
    }),
  );
  return owners;
}

/** A registration as written by `registerOwner`; undefined for anything else. */
function parseOwner(value: string | null): LockOwner | undefined {
  if (!value) return undefined;
  try {
    const { host, pid, instanceId, startedAt } = JSON.parse(value) as Partial<LockOwner>;
    if (typeof host !== 'string' || typeof pid !== 'number') return undefined;
    const started = typeof startedAt === 'number' ? startedAt : 0;
    return typeof instanceId === 'string'
      ? { host, pid, instanceId, startedAt: started }
      : { host, pid, startedAt: started };
  } catch {
    return undefined;
  }
}
