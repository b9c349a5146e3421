import {
  processIdOf,
  type ForcedReleaseListener,
  type LockHolder,
  type LockInspection,
  type LockInspector,
  type LockOwner,
  type LockProcess,
  type LockSummary,
  type OwnerRegistration,
  type StoreForceOptions,
  type StoreInspectOptions,
  type StoreListOptions,
} from '../lock-inspection.interface.js';

/** A live mutex of the memory store. */
export interface MemoryMutex {
  readonly token: string;
  readonly expiresAt: number;
  /** When it was taken, ms since the epoch. */
  readonly since: number;
}

/** A live holder set of the memory store (see memory-holder-sets.ts). */
export interface MemoryHolderSet {
  readonly limit?: number;
  /** Token → lease end (`performance.now()` ms). */
  readonly holders: ReadonlyMap<string, number>;
  readonly writer?: string;
  /** The queue id (or token) of a waiting writer. */
  readonly writerWaits?: string;
}

/** What the memory store shows its inspector; every read drops ended leases first. */
export interface MemoryLocks {
  mutex(key: string): MemoryMutex | undefined;
  holderSet(key: string): MemoryHolderSet | undefined;
  fence(key: string): number | undefined;
  keys(): string[];
  /** Deletes the key's lock and notifies its subscribers; false when it held none. */
  remove(key: string): boolean;
}

/**
 * The memory store's inspector, with the Redis store's answers. It knows when each mutex was
 * taken (`since`), but keeps no waiter lists, so `waiters` is always empty.
 */
export class MemoryInspector implements LockInspector {
  /** Registrations by prefix, then process id. */
  private readonly owners = new Map<string, Map<string, LockOwner>>();
  /** Who hears of forced releases, by prefix: every engine on this store that registered. */
  private readonly forced = new Map<string, Set<ForcedReleaseListener>>();

  constructor(private readonly locks: MemoryLocks) {}

  register({ id, owner, prefix, onForcedRelease }: OwnerRegistration): () => Promise<void> {
    const registered = this.owners.get(prefix) ?? new Map<string, LockOwner>();
    this.owners.set(prefix, registered.set(id, owner));
    const listeners = this.forced.get(prefix) ?? new Set<ForcedReleaseListener>();
    if (onForcedRelease) this.forced.set(prefix, listeners.add(onForcedRelease));
    return async () => {
      if (registered.get(id) === owner) registered.delete(id);
      if (onForcedRelease) listeners.delete(onForcedRelease);
    };
  }

  async inspect(
    key: string,
    { prefix, holders }: StoreInspectOptions,
  ): Promise<LockInspection | undefined> {
    const fence = this.locks.fence(key);
    const base = { key, waiters: [], ...(fence !== undefined && { fence }) };
    const mutex = this.locks.mutex(key);
    if (mutex) {
      const holder = this.named(prefix, mutex.token, {
        ttl: Math.max(0, Math.ceil(mutex.expiresAt - performance.now())),
        since: mutex.since,
      });
      return { ...base, kind: 'mutex', holderCount: 1, holders: [holder] };
    }
    const set = this.locks.holderSet(key);
    if (!set || set.holders.size === 0) return undefined;
    const listed = [...set.holders].sort((a, b) => a[1] - b[1]).slice(0, holders);
    const writerWaiting = set.writerWaits && this.named(prefix, set.writerWaits, {});
    return {
      ...base,
      kind: set.limit === undefined ? 'read-write' : 'semaphore',
      ...(set.limit !== undefined && { limit: set.limit }),
      holderCount: set.holders.size,
      holders: listed.map(([token, end]) => this.setHolder(prefix, set, token, end)),
      ...(writerWaiting && { writerWaiting }),
    };
  }

  async *list({ prefix, match, count }: StoreListOptions): AsyncGenerator<readonly LockSummary[]> {
    const matches = globMatcher(match);
    const keys = this.locks.keys().filter(matches);
    for (let start = 0; start < keys.length; start += count) {
      const page = keys.slice(start, start + count).flatMap((key) => this.summary(prefix, key));
      if (page.length > 0) yield page;
    }
  }

  async forceRelease(key: string, { prefix }: StoreForceOptions): Promise<boolean> {
    const token = this.locks.mutex(key)?.token;
    if (!this.locks.remove(key)) return false;
    for (const listener of this.forced.get(prefix) ?? []) listener(key, token);
    return true;
  }

  private summary(prefix: string, key: string): LockSummary[] {
    const mutex = this.locks.mutex(key);
    const now = performance.now();
    if (mutex) {
      const holder = this.named(prefix, mutex.token, {});
      return [
        { key, kind: 'mutex', holderCount: 1, ttl: Math.ceil(mutex.expiresAt - now), holder },
      ];
    }
    const set = this.locks.holderSet(key);
    if (!set || set.holders.size === 0) return [];
    const ends = [...set.holders].sort((a, b) => a[1] - b[1]);
    const kind = set.limit === undefined ? 'read-write' : 'semaphore';
    const ttl = Math.ceil(ends[ends.length - 1][1] - now);
    const holder = this.named(prefix, ends[0][0], {});
    return [{ key, kind, holderCount: set.holders.size, ttl, holder }];
  }

  private setHolder(prefix: string, set: MemoryHolderSet, token: string, end: number): LockHolder {
    const ttl = Math.max(0, Math.ceil(end - performance.now()));
    if (set.limit !== undefined) return this.named(prefix, token, { ttl });
    return this.named(prefix, token, { ttl, mode: set.writer === token ? 'write' : 'read' });
  }

  /** `fields` with the process named by `token`, and its owner while registered. */
  private named<T extends object>(prefix: string, token: string, fields: T): T & LockProcess {
    const process = processIdOf(token);
    const owner = this.owners.get(prefix)?.get(process);
    return owner ? { process, owner, ...fields } : { process, ...fields };
  }
}

/** A Redis glob (`*`, `?`, `[...]`, `\` escapes) as a test of whole keys. */
export function globMatcher(glob: string): (key: string) => boolean {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i];
    if (char === '\\' && i + 1 < glob.length) source += escapeRegExp(glob[++i]);
    else if (char === '*') source += '[\\s\\S]*';
    else if (char === '?') source += '[\\s\\S]';
    else if (char === '[') {
      const close = glob.indexOf(']', i + 2);
      if (close < 0) source += '\\[';
      else {
        const inside = glob.slice(i + 1, close).replace(/\\/g, '\\\\');
        source += inside.startsWith('^') ? `[^${inside.slice(1)}]` : `[${inside}]`;
        i = close;
      }
    } else source += escapeRegExp(char);
  }
  const pattern = new RegExp(`^${source}$`);
  return (key) => pattern.test(key);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
