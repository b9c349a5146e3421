import { hostname } from 'node:os';
import { LockOptionsError, LockStoreError } from '../errors/lock.errors.js';
import type {
  ForcedReleaseListener,
  LockInspection,
  LockInspector,
  LockOwner,
  LockSummary,
  LockWaiter,
} from '../stores/lock-inspection.interface.js';
import type { LockStore } from '../stores/lock-store.interface.js';
import { inLibraryScope } from '../stores/library-scope.js';
import { asStoreError } from '../stores/store-refusals.js';
import { describe } from './request/lock-options.validation.js';
import { hasControlCharacter, PROCESS_ID, validateLockKeys } from './request/lock-request.js';

/** Options of `LockService.inspect`. */
export interface InspectOptions {
  /**
   * The most holders listed (a semaphore can have many): those whose leases end first.
   * `holderCount` counts them all.
   * @default 100
   */
  readonly holders?: number;
}

/** Options of `LockService.list`. */
export interface ListOptions {
  /**
   * About how many keys each page looks at (Redis `SCAN COUNT`): larger pages are fewer round
   * trips, smaller ones hold Redis for less time.
   * @default 1000
   */
  readonly count?: number;
}

/** Requests this process waits with for a full key: one count per local queue that has some. */
export type LocalWaiters = (fullKey: string) => readonly number[];

/** The engine's side of inspection: its own waiters, and how its held locks hear of a forced release. */
export interface LocalLocks {
  readonly waiters: LocalWaiters;
  readonly forced?: ForcedReleaseListener;
}

const NO_LOCAL_LOCKS: LocalLocks = { waiters: () => [] };

/**
 * `inspect`'s query of the engine's busy keys table: its queues (the entries with `keys` and a
 * `waiterCount`) waiting for the key. The store's turn list may not hold them, as the holder's
 * own process lines its waiters up here and hands them the lock without the store. Read by
 * shape, so that this file imports nothing of the queues.
 */
export function waitersIn(busyKeys: { values(): readonly object[] }): LocalWaiters {
  return (fullKey) =>
    busyKeys.values().flatMap((entry) => {
      const queue = entry as { keys?: readonly string[]; waiterCount?: number };
      return queue.waiterCount && queue.keys?.includes(fullKey) ? [queue.waiterCount] : [];
    });
}

export const DEFAULT_LISTED_HOLDERS = 100;
export const DEFAULT_LIST_PAGE = 1_000;

/**
 * Inspection over a store's `inspector`, in the application's key names: the prefix is added
 * to keys and patterns and taken off results. A store without an inspector (Redlock) is refused
 * with `LockOptionsError`; a store that fails or does not answer within `timeout` ms gives
 * `LockStoreError`.
 */
export class LockInspections {
  /** This process as it registered (see `register`): the owner of its local waiters. */
  private self?: LockOwner;

  constructor(
    private readonly store: LockStore,
    private readonly prefix: string,
    private readonly timeout: number,
    /**
     * What only the engine of this process knows: its own waiters, and its held locks, which
     * hear of forced releases. None for the admin CLI, which holds and waits for nothing.
     */
    private readonly local: LocalLocks = NO_LOCAL_LOCKS,
  ) {}

  /**
   * Registers this process with the store, so that its tokens name it (host, pid, instance id),
   * and its locks hear of forced releases. Returns what unregisters it. A store without an
   * inspector registers nothing.
   */
  register(instanceId?: string): () => Promise<void> {
    const { inspector } = this.store;
    if (!inspector) return async () => undefined;
    const owner = {
      host: hostname(),
      pid: process.pid,
      ...(instanceId !== undefined && { instanceId }),
      startedAt: Math.round(performance.timeOrigin),
    };
    this.self = owner;
    const { prefix, local } = this;
    return inspector.register({ id: PROCESS_ID, owner, prefix, onForcedRelease: local.forced });
  }

  async inspect(key: string, options: InspectOptions = {}): Promise<LockInspection | undefined> {
    const name = singleKey(key);
    const holders = options.holders ?? DEFAULT_LISTED_HOLDERS;
    checkWhole(holders, 'holders');
    const inspector = this.inspector('inspect');
    const read = inspector.inspect(this.prefix + name, { prefix: this.prefix, holders });
    const found = await this.bounded(read, name, 'inspect');
    if (!found) return undefined;
    const waiters = withLocal(found.waiters, this.local.waiters(this.prefix + name), this.self);
    return { ...found, key: name, waiters };
  }

  async *list(pattern = '*', options: ListOptions = {}): AsyncGenerator<LockSummary> {
    if (typeof pattern !== 'string' || hasControlCharacter(pattern)) {
      throw new LockOptionsError(
        `list: the pattern must be a glob without control characters, got ${describe(pattern)}.`,
      );
    }
    const count = options.count ?? DEFAULT_LIST_PAGE;
    checkWhole(count, 'count');
    const { prefix } = this;
    const match = escapeGlob(prefix) + pattern;
    const pages = this.inspector('list').list({ prefix, match, count })[Symbol.asyncIterator]();
    while (true) {
      const page = await this.bounded(pages.next(), undefined, 'list');
      if (page.done) return;
      for (const summary of page.value) yield { ...summary, key: summary.key.slice(prefix.length) };
    }
  }

  async forceRelease(key: string): Promise<boolean> {
    const name = singleKey(key);
    const inspector = this.inspector('forceRelease');
    const { prefix } = this;
    return this.bounded(inspector.forceRelease(prefix + name, { prefix }), name, 'forceRelease');
  }

  private inspector(call: string): LockInspector {
    const { inspector } = this.store;
    if (inspector) return inspector;
    throw new LockOptionsError(
      `${call}: this store cannot inspect locks (Redlock spreads each lock over several masters). ` +
        'Inspect each master with the admin CLI (npx nestjs-distributed-lock), or use a single Redis store.',
    );
  }

  /**
   * The store's answer, or `LockStoreError` when it fails or is later than `timeout`: a
   * `LockStoreRefusedError` for a refusal (an ACL user without the inspection grants).
   */
  private bounded<T>(call: Promise<T>, key: string | undefined, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = inLibraryScope(() =>
        setTimeout(() => {
          reject(new LockStoreError(key, `no answer within ${this.timeout} ms.`));
        }, this.timeout),
      );
      call.then(resolve, (error: unknown) => reject(asStoreError(error, key, what, this.prefix)));
      call.finally(() => clearTimeout(timer)).catch(() => undefined);
    });
  }
}

/**
 * The store's waiters, and this process's own requests waiting for the key, marked `local`: on
 * the store's entry for this process, if it has one, or on an entry of its own.
 */
function withLocal(
  listed: readonly LockWaiter[],
  queues: readonly number[],
  owner: LockOwner | undefined,
): readonly LockWaiter[] {
  if (queues.length === 0) return listed;
  const requests = queues.reduce((sum, count) => sum + count, 0);
  const own = listed.find((waiter) => waiter.process === PROCESS_ID);
  const local = {
    ...(own ?? { process: PROCESS_ID, owner, queues: queues.length }),
    local: true,
    requests,
  } as const;
  return own ? listed.map((waiter) => (waiter === own ? local : waiter)) : [...listed, local];
}

/** One key name, checked as an acquire checks it; a multi-key lock is inspected key by key. */
function singleKey(key: unknown): string {
  if (Array.isArray(key)) {
    throw new LockOptionsError('Inspect or release one key at a time, not a list of keys.');
  }
  return validateLockKeys(key)[0];
}

function checkWhole(value: unknown, name: string): void {
  if (!Number.isSafeInteger(value) || (value as number) < 1) {
    throw new LockOptionsError(
      `"${name}" must be a whole number, 1 or more, got ${describe(value)}.`,
    );
  }
}

/** `text` matched literally by a Redis glob: its `*`, `?`, `[`, `]` and `\` escaped. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
