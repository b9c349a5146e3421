/** What a release found. `expired`: the lease had already run out. `stolen`: another owner holds it. */
export type ReleaseResult = 'released' | 'expired' | 'stolen';

/** What a release found, and whether processes other than this one were waiting for the keys. */
export interface ReleaseReport {
  readonly result: ReleaseResult;
  /**
   * Another process was waiting: subscribed to the release notification, or given the key in
   * its turn. The next local waiter then waits to be woken like everyone else instead of trying
   * at once.
   */
  readonly waitersElsewhere: boolean;
  /** The key now holds `ReleaseOptions.successor`'s lease. */
  readonly succeeded?: boolean;
}

/** What an extend found, per lease. */
export type ExtendResult = 'extended' | 'expired' | 'stolen';

export interface AcquireRequest {
  /** Full keys (prefix applied). More than one means all-or-nothing. */
  readonly keys: readonly string[];
  /** The owner token, stored as the key's value. */
  readonly token: string;
  /** Lease in ms. */
  readonly ttl: number;
  /** Also increment and return each key's fence counter. */
  readonly fencing: boolean;
  /**
   * Id of the local wait queue whose head makes this attempt, already subscribed to the keys'
   * release notifications. A store that wakes only the waiters it knows of enters the queue
   * when a key is busy; one that keeps turns puts it in line, and later gives the key to it
   * (see `subscribe`).
   */
  readonly queue?: string;
  /**
   * False: the queue wants to be woken by the next release but never given a turn (Redlock: the
   * lines on each node could order processes differently and split votes). @default true
   */
  readonly takesTurns?: boolean;
}

export interface ReleaseOptions {
  /** Wake nobody and give no turn: giving back a lock nobody used. @default false */
  readonly quiet?: boolean;
  /**
   * Id of the releasing process's queue when it still has waiters: a store that keeps turns puts
   * it back in line when the key goes to another process.
   */
  readonly requeue?: string;
  /**
   * A lease for the releasing process's next waiter (single-key locks). A store may set it in
   * the same call when no other process waits its turn, and say so in `succeeded`.
   */
  readonly successor?: { readonly token: string; readonly ttl: number };
}

/** Called on a release notification: `turn` names the queue whose turn it is, if any. */
export type ReleaseListener = (turn?: string) => void;

import type { NodeOutcome } from '../errors/lock.errors.js';

export type { NodeOutcome };

export type AcquireAttempt =
  | {
      readonly acquired: true;
      /** One per key, when fencing. */
      readonly fences?: readonly number[];
    }
  | {
      readonly acquired: false;
      /** Remaining lease of the blocking holder in ms; -1 when the key has no expiry. */
      readonly pttl: number;
      /** Per-node answers, for multi-node stores. */
      readonly nodes?: readonly NodeOutcome[];
    };

export interface LeaseExtension {
  readonly keys: readonly string[];
  readonly token: string;
  readonly ttl: number;
}

/**
 * A lock backend. Every method is one round trip to the backend; the engine layers waiting,
 * renewal and reentrancy on top. Implement it to plug in another backend.
 */
export interface LockStore {
  /**
   * How long, in ms, a key given to a process in its turn stays reserved for it, for stores that
   * keep turns (see `AcquireRequest.queue`). Waiters look again once it would have lapsed.
   */
  readonly turnGrace?: number;
  /**
   * True when every grant must come from `tryAcquire`, e.g. because the store confirms each one
   * with replicas. The engine then never hands a lease on inside the process, nor asks a release
   * to set a successor's lease. @default false
   */
  readonly grantsOnlyOnAcquire?: boolean;
  /** Where the store is, for logs: e.g. `redis://10.0.0.5:6379/0`, never with credentials. */
  readonly endpoint?: string;
  /**
   * The store's eviction policy (Redis `maxmemory-policy`), checked at startup: a policy that can
   * evict keys with a TTL can drop a held lock. Undefined when the store cannot say.
   */
  evictionPolicy?(): Promise<string | undefined>;
  /** False when the store cannot issue safe monotonic fences (Redlock). @default true */
  readonly supportsFencing?: boolean;
  /** Throws `LockKeyError` for keys this store cannot lock together (e.g. across Cluster slots). */
  checkKeys?(keys: readonly string[]): void;
  /** Checks the store's configuration once at startup (e.g. that WAIT is available). */
  init?(): Promise<void>;
  /** Clock-drift allowance in ms subtracted from every lease of `ttl` ms. @default 0 */
  drift?(ttl: number): number;
  /** Takes every key if all are free, atomically; otherwise changes nothing. */
  tryAcquire(request: AcquireRequest): Promise<AcquireAttempt>;
  /**
   * Deletes the keys that still hold `token` and notifies their waiters (unless `quiet`: a lock
   * given back unused wakes nobody); never touches another owner's key.
   */
  release(keys: readonly string[], token: string, options?: ReleaseOptions): Promise<ReleaseReport>;
  /** Re-arms the leases still held by their tokens, all in one round trip. */
  extend(leases: readonly LeaseExtension[]): Promise<ExtendResult[]>;
  /**
   * Calls `onRelease` whenever `key` is released, and also whenever notifications may have
   * been missed (e.g. after a reconnect). A store that keeps turns names the queue whose turn
   * it is; the other queues keep waiting. Resolves once the subscription is active, so an
   * attempt made after it cannot miss a wake-up. The returned function unsubscribes.
   */
  subscribe(key: string, onRelease: ReleaseListener): Promise<() => void>;
  /** Takes a queue that stopped waiting for `key` out of its turn list. Best effort. */
  leaveTurns?(key: string, queue: string): void;
  /** Checks the store answers. */
  ping(): Promise<void>;
  /** Frees the store's resources. Connections the user passed in stay open. */
  close(): Promise<void>;
}
