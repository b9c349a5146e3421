/**
 * Locks you can see: who holds a key, since when and for how long, who waits, and the tools an
 * operator needs when a lock is stuck (see `LockStore.inspector`).
 */
import { createHash } from 'node:crypto';

/**
 * How many characters at the start of every owner token (and queue id) this library makes name
 * the process that made it: its process id (see `OwnerRegistration`). The rest is random.
 */
export const PROCESS_ID_CHARS = 8;

/**
 * The length of every owner token and queue id this library makes, all base64url: the process
 * id, random characters, then the token check (`TOKEN_CHECK_CHARS`).
 */
export const TOKEN_CHARS = 30;

/**
 * How many characters end every token and queue id this library makes: a hash of the process id
 * (`tokenCheckOf`). A store tells the library's own values from another client's by it, whatever
 * the other client's tokens look like, and so changes none of theirs (see WAITERS_MARK in the
 * Redis store). A value of another client's passes only by a chance of 1 in 2^32.
 */
export const TOKEN_CHECK_CHARS = 8;

/** Hashed before the process id, so that the check is this library's and no one else's. */
export const TOKEN_CHECK_SALT = 'nestjs-distributed-lock:';

/** The check that ends every token of process `processId` (lower-case hex). */
export function tokenCheckOf(processId: string): string {
  const hash = createHash('sha1')
    .update(TOKEN_CHECK_SALT + processId)
    .digest('hex');
  return hash.slice(0, TOKEN_CHECK_CHARS);
}

/** The process named by a token's first `PROCESS_ID_CHARS` characters. */
export function processIdOf(token: string): string {
  return token.slice(0, PROCESS_ID_CHARS);
}

/** A process that takes locks, as it registered itself. */
export interface LockOwner {
  /** `os.hostname()` of the process. */
  readonly host: string;
  readonly pid: number;
  /** The module's `instanceId` option, when the application set one. */
  readonly instanceId?: string;
  /** When the process started, in ms since the epoch. */
  readonly startedAt: number;
}

/**
 * Told that the lock at `key` (a full key) was removed by force: every lock this process holds
 * there is lost, or only the one of `token` when given (a mutex's holder).
 */
export type ForcedReleaseListener = (key: string, token: string | undefined) => void;

/** What a process registers once, so that its tokens name it. */
export interface OwnerRegistration {
  /** The process id every token of this process begins with (`PROCESS_ID_CHARS` characters). */
  readonly id: string;
  readonly owner: LockOwner;
  /** The module's `keyPrefix`: the registration lives beside the locks it names. */
  readonly prefix: string;
  /**
   * Hears every `forceRelease` of a lock under `prefix`, from any process, as soon as the store
   * can tell: the holders' code must stop at once, not at their next renewal.
   */
  readonly onForcedRelease?: ForcedReleaseListener;
}

/** A process named by a token: its process id, and its owner while its registration lasts. */
export interface LockProcess {
  /** The process id at the start of the token (for tokens of other libraries, their start). */
  readonly process: string;
  /** Undefined when the process's registration is gone (it stopped, or crashed over a minute ago). */
  readonly owner?: LockOwner;
}

/** One holder of a lock. */
export interface LockHolder extends LockProcess {
  /** Time left on its lease, in ms. */
  readonly ttl: number;
  /** When it took the lock (ms since the epoch), where the store knows it (memory store only). */
  readonly since?: number;
  /** A read-write lock's holder: reader or writer. */
  readonly mode?: 'read' | 'write';
  /** A mutex reserved, for at most the turn grace, for the process whose turn it is. */
  readonly reserved?: boolean;
}

/** A process waiting for a lock, as the store's waiter list knows it. */
export interface LockWaiter extends LockProcess {
  /**
   * Entries of the process in the key's waiter list: one per local queue (a queue holds all the
   * requests of that process for the key), so it counts processes' queues, not requests.
   */
  readonly queues: number;
  /**
   * Set on the entry of the process that called `inspect` (never by the admin CLI, another
   * process), when it has requests waiting for the key: the engine knows them, while the
   * store's waiter list may not (a holder's own process lines its waiters up itself).
   */
  readonly local?: true;
  /** With `local`: how many requests of this process wait for the key. */
  readonly requests?: number;
}

/** The kind of a held key, as an operator sees it: read and write locks share one key. */
export type InspectedKind = 'mutex' | 'semaphore' | 'read-write';

/** What `inspect` found at a held key. */
export interface LockInspection {
  /** The key as the application names it (without the prefix). */
  readonly key: string;
  readonly kind: InspectedKind;
  /** A semaphore's limit. */
  readonly limit?: number;
  /** Live holders: all of them, or the first `holders` by lease end (see `holderCount`). */
  readonly holders: readonly LockHolder[];
  /** How many live holders the key has, including any not listed in `holders`. */
  readonly holderCount: number;
  /**
   * Processes in the key's waiter list (Redis: its turn list; the memory store keeps none): in
   * line for their turn, or listening for the next release.
   */
  readonly waiters: readonly LockWaiter[];
  /** The process of a writer waiting for a read-write lock, which holds new readers back. */
  readonly writerWaiting?: LockProcess;
  /** The last fence issued for the key, while its counter lasts. */
  readonly fence?: number;
}

/** One held lock, as `list` pages them: enough for a table row. */
export interface LockSummary {
  /** The key as the application names it (without the prefix). */
  readonly key: string;
  readonly kind: InspectedKind;
  readonly holderCount: number;
  /** Time left until the key expires, in ms: its longest lease. */
  readonly ttl: number;
  /** The first holder (of a holder set: the one whose lease ends first). */
  readonly holder?: LockProcess;
}

/** What the engine asks `inspect` of a store. */
export interface StoreInspectOptions {
  /** The module's `keyPrefix`, where owner registrations live. */
  readonly prefix: string;
  /** The most holders to list. */
  readonly holders: number;
}

/** What the engine asks `forceRelease` of a store. */
export interface StoreForceOptions {
  /** The module's `keyPrefix`, under which the holders' processes registered. */
  readonly prefix: string;
}

/** What the engine asks `list` of a store. */
export interface StoreListOptions {
  readonly prefix: string;
  /** A `SCAN MATCH` glob over full keys (prefix included, escaped). */
  readonly match: string;
  /** The `SCAN COUNT` hint: about how many keys one page looks at. */
  readonly count: number;
}

/**
 * A store's inspection capability (`LockStore.inspector`). Keys are full keys (prefix applied);
 * `key` in the results is the full key too: the engine takes the prefix off.
 */
export interface LockInspector {
  /**
   * Registers the process, with an expiry it keeps renewing, until the returned function is
   * called (at shutdown), which removes the registration.
   */
  register(registration: OwnerRegistration): () => Promise<void>;
  /** What is at `key`; undefined when it is free. Bounded: never reads a whole holder set. */
  inspect(key: string, options: StoreInspectOptions): Promise<LockInspection | undefined>;
  /** Pages through the held locks whose keys match (never `KEYS`); companion keys skipped. */
  list(options: StoreListOptions): AsyncIterable<readonly LockSummary[]>;
  /**
   * Removes the lock at `key`, whatever its kind and holders, wakes its waiters as a release
   * does, and tells the holders' processes (`OwnerRegistration.onForcedRelease`). False when
   * the key was free.
   */
  forceRelease(key: string, options: StoreForceOptions): Promise<boolean>;
}
