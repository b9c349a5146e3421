import { LockStoreRefusedError, type LockError } from '../../errors/lock.errors.js';
import type { LockStore } from '../../stores/lock-store.interface.js';
import { timed } from '../../stores/store-health.js';
import { refusesCorePath } from '../../stores/store-refusals.js';
import type { LockEvent, StoreEvent, StoreOperation } from '../lock.events.js';

/** Where store events go: the event stream, and the operator's log. */
export interface StoreEventSink {
  emit(event: LockEvent): void;
  log(event: StoreEvent): void;
}

/**
 * How long a kind of store refusal counts as current after it last happened: health reports it
 * down that long, and it is told again only when it comes back after that long without it. A
 * fixed ACL shows within this time, without a restart.
 */
export const REFUSAL_MEMORY = 60_000;

/** A kind of refusal seen lately: its latest error, and whether it stops a plain mutex. */
export interface RecentRefusal {
  readonly error: LockStoreRefusedError;
  /**
   * It stops a mutex's acquire and release (a core command or the lock keys refused), rather
   * than one feature (fences, holder sets, notifications, replicas) or one key.
   */
  readonly core: boolean;
}

/**
 * Follows whether the store answers, so that an outage is told once when it begins and once
 * when it ends, however many calls fail in between. A call the store refused with an error
 * reply (out of memory, a script error) is a failure, but the store is up. A refusal that
 * retrying cannot fix (`LockStoreRefusedError`) is told once per kind, and kept for health.
 */
export class StoreHealthMonitor {
  /** When the current outage began (`performance.now()`); undefined while the store answers. */
  downSince?: number;
  /** The last error of each kind of refusal, and when it happened. */
  private readonly refusals = new Map<string, { error: LockStoreRefusedError; at: number }>();

  constructor(
    private readonly sink: StoreEventSink,
    private readonly endpoint: string | undefined,
    /** The module's key prefix, which the advice on ACL keys and channels names. */
    readonly keyPrefix = '',
  ) {}

  get down(): boolean {
    return this.downSince !== undefined;
  }

  failed(error: LockError, key: string | undefined, what: StoreOperation): void {
    this.sink.emit({ type: 'error', key, operation: what, error });
    if (error instanceof LockStoreRefusedError) return this.refused(error, what);
    if (this.downSince === undefined && !isErrorReply(error)) this.wentDown(error, false);
  }

  answered(): void {
    if (this.downSince === undefined) return;
    const downFor = performance.now() - this.downSince;
    this.downSince = undefined;
    this.tell({ type: 'store-up', endpoint: this.endpoint, downFor });
  }

  /** The startup check failed: the store does not answer, or refused the check. */
  failedAtStartup(error: Error): void {
    if (error instanceof LockStoreRefusedError) return this.refused(error, 'ping');
    if (this.downSince === undefined) this.wentDown(error, true);
  }

  /**
   * The startup check of the eviction policy: warns of one that can evict lock keys, or, when
   * the store cannot say (CONFIG and INFO refused), that it could not be verified.
   */
  async checkEviction(store: LockStore, timeout: number): Promise<void> {
    if (!store.evictionPolicy) return;
    const answer = await timed(store.evictionPolicy(), timeout);
    const policy = answer.ok ? answer.value : undefined;
    if (policy === undefined) {
      const reason = answer.ok ? 'the store did not say' : answer.error;
      return this.tell({ type: 'eviction-unverified', endpoint: this.endpoint, reason });
    }
    if (policy !== 'noeviction') this.unsafeEviction(policy);
  }

  /** The startup check found a setting that can lose locks. */
  unsafeEviction(policy: string): void {
    this.tell({ type: 'unsafe-eviction', endpoint: this.endpoint, policy });
  }

  /** The refusals of the last `REFUSAL_MEMORY` ms: the latest error of each kind. */
  recentRefusals(now = performance.now()): RecentRefusal[] {
    const recent = [...this.refusals.values()].filter(({ at }) => now - at <= REFUSAL_MEMORY);
    return recent.map(({ error }) => ({
      error,
      core: refusesCorePath({ kind: error.refusal, refused: error.refused }),
    }));
  }

  /** Told when a kind is first seen, or comes back after `REFUSAL_MEMORY` ms without it. */
  private refused(error: LockStoreRefusedError, operation: StoreOperation): void {
    const kind = `${error.refusal} ${error.refused}`;
    const now = performance.now();
    const last = this.refusals.get(kind);
    this.refusals.set(kind, { error, at: now });
    if (last && now - last.at <= REFUSAL_MEMORY) return;
    this.tell({ type: 'store-refused', endpoint: this.endpoint, error, operation });
  }

  private wentDown(error: Error, atStartup: boolean): void {
    this.downSince = performance.now();
    this.tell({ type: 'store-down', endpoint: this.endpoint, error, atStartup });
  }

  private tell(event: StoreEvent): void {
    this.sink.log(event);
    this.sink.emit(event);
  }
}

/** Failures in which the store answered: it is reachable. */
const ANSWERED_FAILURES = new Set([
  'ReplyError', // ioredis: an error reply (out of memory, a script error)
  'ReplicasBehindError', // the Redis store: too few replicas acknowledged a grant
]);

function isErrorReply(error: Error): boolean {
  return ANSWERED_FAILURES.has((error.cause as Error | undefined)?.name ?? '');
}
