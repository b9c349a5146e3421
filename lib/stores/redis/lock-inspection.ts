import {
  processIdOf,
  type InspectedKind,
  type LockHolder,
  type LockInspection,
  type LockInspector,
  type LockOwner,
  type LockProcess,
  type LockSummary,
  type LockWaiter,
  type OwnerRegistration,
  type StoreForceOptions,
  type StoreInspectOptions,
  type StoreListOptions,
} from '../lock-inspection.interface.js';
import { COMPANION_SEPARATOR } from './redis-commands.js';
import type { RedisClientPort } from './redis-client.port.js';
import { fenceKeyOf, forcedChannelOf, turnsKeyOf, writerKeyOf } from './redis-commands.js';
import type { ReleaseNotifier } from './release-notifier.js';
import { WAITERS_MARK } from './scripts/lua-helpers.js';
import { listLocks } from './lock-listing.js';
import { ownersOf, registerOwner } from './owner-registry.js';
import { FORCE_RELEASE, INSPECT } from './scripts/inspection.scripts.js';
import type { PublishCommand } from './scripts/lua-script.js';

/** A mutex key reserved for a process's turn holds this, then the queue id. */
const RESERVATION = 'turn:';

/**
 * The Redis store's inspector: `inspect` is one script call and one MGET of the owners it
 * names, `list` pages with SCAN, `forceRelease` is one script call that wakes waiters as a
 * release does. Owners come from tokens: each begins with its process's id, registered once
 * per process (see owner-registry.ts), so taking a lock costs nothing more.
 */
export class RedisLockInspector implements LockInspector {
  constructor(
    private readonly port: RedisClientPort,
    private readonly publish: PublishCommand,
    private readonly notifier: ReleaseNotifier,
  ) {}

  /** Registers the owner, and hears the prefix's forced releases on the release subscriber. */
  register(registration: OwnerRegistration): () => Promise<void> {
    const unregister = registerOwner(this.port, registration);
    const { prefix, onForcedRelease } = registration;
    if (!onForcedRelease) return unregister;
    const listening = this.notifier.subscribe(forcedChannelOf(prefix), (notice) => {
      // No notice: the subscriber reconnected, and a holder learns at its next renewal.
      if (notice !== undefined) onForcedRelease(...readNotice(notice));
    });
    listening.catch(() => undefined);
    // Not awaited at shutdown: a subscription to a Redis that is down would hold it up, and
    // closing the store closes the subscriber in any case.
    return async () => {
      listening.then(
        (unsubscribe) => unsubscribe(),
        () => undefined,
      );
      await unregister();
    };
  }

  async inspect(key: string, options: StoreInspectOptions): Promise<LockInspection | undefined> {
    const scriptKeys = [key, turnsKeyOf(key), writerKeyOf(key), fenceKeyOf(key)];
    const reply = await this.port.script<unknown[]>(INSPECT, scriptKeys, [options.holders]);
    const found = readInspection(key, reply);
    if (!found) return undefined;
    const ids = [...found.holders, ...found.waiters, found.writerWaiting].flatMap((named) =>
      named ? [named.process] : [],
    );
    const owners = await ownersOf(this.port, options.prefix, ids);
    return withOwners(found, owners);
  }

  list(options: StoreListOptions): AsyncIterable<readonly LockSummary[]> {
    return listLocks(this.port, options);
  }

  async forceRelease(key: string, { prefix }: StoreForceOptions): Promise<boolean> {
    const script = FORCE_RELEASE[this.publish];
    const holder = await this.port.script<string | null>(script, [key, turnsKeyOf(key)], []);
    if (holder === null) return false;
    // A reservation has no holder; a holder set's holders are all told.
    if (!holder.startsWith(RESERVATION)) {
      const marked = holder.endsWith(WAITERS_MARK);
      const token = holder === '' ? undefined : marked ? holder.slice(0, -1) : holder;
      await this.port.send(this.publish, [forcedChannelOf(prefix), noticeOf(key, token)]);
    }
    return true;
  }
}

/** A forced release's notice: the full key, and its holder's token for a mutex. */
function noticeOf(key: string, token: string | undefined): string {
  return token === undefined ? key : `${key}${COMPANION_SEPARATOR}${token}`;
}

function readNotice(notice: string): [string, string | undefined] {
  const [key, token] = notice.split(COMPANION_SEPARATOR);
  return [key, token];
}

/** INSPECT's reply (see its comment), owners still to be looked up; undefined when free. */
function readInspection(key: string, reply: unknown[]): LockInspection | undefined {
  const [type, fence, writer, line] = reply as [string, string, string, string[]];
  if (type !== 'string' && type !== 'zset') return undefined;
  const common = {
    key,
    waiters: waitersOf(line),
    writerWaiting: writer ? { process: processIdOf(writer) } : undefined,
    fence: fence ? Number(fence) : undefined,
  };
  if (type === 'string') {
    const [value, pttl] = reply.slice(4) as [string, number];
    return { ...common, kind: 'mutex', holderCount: 1, holders: [mutexHolder(value, pttl)] };
  }
  const [now, live, last, members] = reply.slice(4) as [number, number, string, string[]];
  if (live === 0) return undefined;
  const limit = last.startsWith('L') ? Number(last.slice(1)) : undefined;
  const kind: InspectedKind = limit === undefined ? 'read-write' : 'semaphore';
  return { ...common, kind, limit, holderCount: live, holders: setHolders(members, now) };
}

function mutexHolder(value: string, pttl: number): LockHolder {
  if (value.startsWith(RESERVATION)) {
    return { process: processIdOf(value.slice(RESERVATION.length)), ttl: pttl, reserved: true };
  }
  return { process: processIdOf(value), ttl: pttl };
}

/** Holder-set members ('s', 'r' or 'w' .. token) with their lease ends, as holders. */
function setHolders(members: string[], now: number): LockHolder[] {
  const holders: LockHolder[] = [];
  for (let i = 0; i < members.length; i += 2) {
    const member = members[i];
    const letter = member[0];
    const ttl = Math.max(0, Number(members[i + 1]) - now);
    const mode = letter === 'r' ? 'read' : letter === 'w' ? 'write' : undefined;
    const process = processIdOf(member.slice(1));
    holders.push(mode ? { process, ttl, mode } : { process, ttl });
  }
  return holders;
}

/** Turn-list entries (queue ids, '*' .. queue id for listeners), counted per process. */
function waitersOf(line: string[]): LockWaiter[] {
  const queues = new Map<string, number>();
  for (const entry of line) {
    const process = processIdOf(entry.startsWith('*') ? entry.slice(1) : entry);
    queues.set(process, (queues.get(process) ?? 0) + 1);
  }
  return [...queues].map(([process, count]) => ({ process, queues: count }));
}

function withOwners(found: LockInspection, owners: Map<string, LockOwner>): LockInspection {
  const named = <T extends LockProcess>(entry: T): T => {
    const owner = owners.get(entry.process);
    return owner ? { ...entry, owner } : entry;
  };
  const { writerWaiting, fence, limit, ...rest } = found;
  return {
    ...rest,
    holders: found.holders.map(named),
    waiters: found.waiters.map(named),
    ...(writerWaiting && { writerWaiting: named(writerWaiting) }),
    ...(limit !== undefined && { limit }),
    ...(fence !== undefined && { fence }),
  };
}
