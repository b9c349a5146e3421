import type { RedisClient } from './redis/redis-clients.js';
import type { LockInspector } from './lock-inspection.interface.js';

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

/**
 * Who may hold a key at once. `mutex`: one holder (the common Redis lock protocol). `semaphore`:
 * up to `limit` holders. `read` and `write`: the two sides of a read-write lock, where readers
 * share and a writer excludes everyone. Every kind but `mutex` takes a single key and is an
 * optional capability of a store (see `LockStore.kinds`).
 */
export type LockKind =
  | { readonly type: 'mutex' }
  | { readonly type: 'semaphore'; readonly limit: number }
  | { readonly type: 'read' }
  | { readonly type: 'write' };

/** The kinds beyond the mutex that a store may offer. */
export type SharedLockType = Exclude<LockKind['type'], 'mutex'>;

export interface AcquireRequest {
  /** Full keys (prefix applied). More than one means all-or-nothing. */
  readonly keys: readonly string[];
  /** Who may hold the key with this holder. @default { type: 'mutex' } */
  readonly kind?: LockKind;
  /** The owner token, stored as the key's value: 30 base64url characters ending with its check (see `tokenCheckOf`), as the engine makes. */
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
  /**
   * For a `write` attempt: how long, in ms, a failed attempt holds new readers back. The waiting
   * writer renews it with every attempt, so that a stream of readers cannot starve it.
   */
  readonly patience?: number;
}

export interface ReleaseOptions {
  /** The kind the lease was taken as. @default { type: 'mutex' } */
  readonly kind?: LockKind;
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
      /**
       * Set when the key is held as another kind of lock, or as a semaphore of another limit:
       * how it is held, e.g. `a semaphore of limit 3`. The engine refuses the acquire then.
       */
      readonly conflict?: string;
    };

export interface LeaseExtension {
  readonly keys: readonly string[];
  readonly token: string;
  readonly ttl: number;
  /** The kind the lease was taken as. @default { type: 'mutex' } */
  readonly kind?: LockKind;
}

/**
 * A store that remembers which processes wait for a key (see `AcquireRequest.queue`), to wake
 * only when someone waits and, if it keeps turns, to give a busy key to them in the order they
 * came.
 */
export interface WaiterLists {
  /**
   * Set by a store that keeps turns: how long, in ms, a key given to a process in its turn stays
   * reserved for it. Waiters look again once it would have lapsed.
   */
  readonly turnGrace?: number;
  /** Takes a queue that stopped waiting for `key` out of the key's lists. Best effort. */
  leave(key: string, queue: string): void;
}

/** How a Redis Cluster says it is: `fail` when some slot has no reachable master. */
export type ClusterState = 'ok' | 'fail' | 'unknown';

/** How many nodes of a quorum store (Redlock) answered, against how many must. */
export interface QuorumHealth {
  /** Nodes that answered within the timeout. */
  readonly reachable: number;
  /** Nodes that must agree for a lock to be held. */
  readonly needed: number;
  /** Nodes the store has. */
  readonly nodes: number;
}

/**
 * What `LockStore.health` found. The Nest health indicator (`nestjs-distributed-lock/health`)
 * maps it to terminus: `up` to its status, the other fields to its details.
 */
export interface StoreHealth {
  /** The store can take locks now: it answered, a quorum of its nodes did, its cluster is ok. */
  readonly up: boolean;
  /**
   * Round trip of the check in ms: a PING, or for a quorum store the time until a quorum of
   * nodes had answered. Absent when the store did not answer.
   */
  readonly roundTripMs?: number;
  /** Why the store is down; absent while it is up. */
  readonly error?: string;
  /** Quorum stores (Redlock): how many nodes answered. */
  readonly quorum?: QuorumHealth;
  /** Redis Cluster: the cluster's `cluster_state`; `unknown` when CLUSTER INFO got no answer. */
  readonly cluster?: { readonly state: ClusterState };
  /**
   * The store's eviction policy (Redis `maxmemory-policy`): any policy but `noeviction` can drop
   * a held lock's key, since every lock key has an expiry. `unknown` when the server refused to
   * say (CONFIG is disabled on managed Redis, or the ACL user lacks `+config`), which does not
   * make the store down. Absent for stores that evict nothing (memory).
   */
  readonly evictionPolicy?: string;
}

/**
 * What `LOCK_REDIS_CLIENT` injects from a store: the client it talks through (ioredis,
 * node-redis or Valkey GLIDE: yours, or the one the module made), or a quorum store's node
 * clients, in order.
 */
export type StoreClient = RedisClient | readonly RedisClient[];

/**
 * A lock backend. Implement it to plug in another backend; `MemoryLockStore` is the reference.
 *
 * The core is six calls, each one round trip: `tryAcquire`, `release`, `extend`, `subscribe`
 * (the release notification waiters wake on), `ping` and `close`. The engine layers waiting,
 * renewal, reentrancy and events on top. Everything else is an optional capability, used when
 * present: `kinds` (semaphores, read-write locks), `waiters` (wake-ups and fair turns across
 * processes), fencing, replica confirmation, key checks, startup checks, `health` and `client`.
 */
export interface LockStore {
  /** The kinds beyond the mutex this store can lock; the engine refuses the others. @default [] */
  readonly kinds?: readonly SharedLockType[];
  /** Present when the store keeps lists of waiting processes. */
  readonly waiters?: WaiterLists;
  /** Present when the store can show its locks and free one by force (`LockService.inspect`). */
  readonly inspector?: LockInspector;
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
  /** Checks the store answers. */
  ping(): Promise<void>;
  /**
   * A health report for monitoring (the terminus indicator calls it); without it the indicator
   * times a `ping`. Each command it sends is bounded by `timeout` ms, so it settles within about
   * that; it never rejects: a store that does not answer is reported down, with the reason.
   */
  health?(timeout: number): Promise<StoreHealth>;
  /**
   * The connection the store talks through, for the application's own commands on the same
   * server (e.g. fenced writes): the Nest module injects it as `LOCK_REDIS_CLIENT`. Absent when
   * the store has none to share. The store's owner closes it, not the application.
   */
  readonly client?: StoreClient;
  /** Frees the store's resources. Connections the user passed in stay open. */
  close(): Promise<void>;
}
