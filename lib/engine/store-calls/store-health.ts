import type { LockError } from '../../errors/lock.errors.js';
import type { LockEvent, StoreEvent } from '../lock.events.js';
import type { StoreOperation } from './store-call.js';

/** What every store call reports: its failure, or that the store answered. */
export interface StoreHealth {
  failed(error: LockError, key: string | undefined, what: StoreOperation): void;
  answered(): void;
}

/** Where store events go: the event stream, and the operator's log. */
export interface StoreEventSink {
  emit(event: LockEvent): void;
  log(event: StoreEvent): void;
}

/**
 * Follows whether the store answers, so that an outage is told once when it begins and once
 * when it ends, however many calls fail in between. A call the store refused with an error
 * reply (out of memory, a script error) is a failure, but the store is up.
 */
export class StoreHealthMonitor implements StoreHealth {
  private downSince?: number;

  constructor(
    private readonly sink: StoreEventSink,
    private readonly endpoint: string | undefined,
  ) {}

  get down(): boolean {
    return this.downSince !== undefined;
  }

  failed(error: LockError, key: string | undefined, what: StoreOperation): void {
    this.sink.emit({ type: 'error', key, operation: what, error });
    if (this.downSince === undefined && !isErrorReply(error)) this.wentDown(error, false);
  }

  answered(): void {
    if (this.downSince === undefined) return;
    const downFor = performance.now() - this.downSince;
    this.downSince = undefined;
    this.tell({ type: 'store-up', endpoint: this.endpoint, downFor });
  }

  /** The startup check found the store not answering. */
  unreachableAtStartup(error: Error): void {
    if (this.downSince === undefined) this.wentDown(error, true);
  }

  /** The startup check found a setting that can lose locks. */
  unsafeEviction(policy: string): void {
    this.tell({ type: 'unsafe-eviction', endpoint: this.endpoint, policy });
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
