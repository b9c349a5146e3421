import { Subject, type Observable } from 'rxjs';
import type { LockLossReason } from '../errors/lock.errors.js';
import type { ReleaseResult } from '../stores/lock-store.interface.js';

interface EventBase {
  /** The lock key as the caller named it (without the module's prefix). */
  readonly key: string;
}

/** Every state change of every lock, on one stream: build logging, metrics and tracing on it. */
export type LockEvent =
  | (EventBase & {
      readonly type: 'acquired';
      /** ms from the call to the lock being held. */
      readonly waited: number;
      readonly fence?: number;
    })
  | (EventBase & {
      readonly type: 'contended';
      /** Holder's remaining lease, ms (-1: none). */ readonly pttl: number;
    })
  | (EventBase & { readonly type: 'busy'; readonly waited: number })
  | (EventBase & {
      readonly type: 'released';
      /** ms held, counted from when the winning attempt was sent (the lease's start). */
      readonly held: number;
      readonly result: ReleaseResult;
    })
  | (EventBase & { readonly type: 'renewed'; readonly ttl: number })
  | (EventBase & { readonly type: 'expired'; readonly held: number })
  | (EventBase & { readonly type: 'lost'; readonly held: number; readonly reason: LockLossReason })
  | {
      readonly type: 'error';
      /** Undefined for a batched renewal, which covers many keys. */
      readonly key: string | undefined;
      readonly operation: 'acquire' | 'release' | 'extend' | 'subscribe' | 'ping';
      readonly error: Error;
    }
  | StoreEvent;

/**
 * The store's state, as an operator wants to hear it: once when it stops answering (or does not
 * answer at startup), once when it is back, and a risky setting found at startup.
 */
export type StoreEvent =
  | {
      readonly type: 'store-down';
      readonly key?: undefined;
      /** Where the store is (no credentials), when the store can say. */
      readonly endpoint?: string;
      readonly error: Error;
      /** The store did not answer the startup check. */
      readonly atStartup: boolean;
    }
  | {
      readonly type: 'store-up';
      readonly key?: undefined;
      readonly endpoint?: string;
      /** ms from the first failure to the first answer since. */
      readonly downFor: number;
    }
  | {
      readonly type: 'unsafe-eviction';
      readonly key?: undefined;
      readonly endpoint?: string;
      /** Redis `maxmemory-policy`: any but `noeviction` may evict a held lock's key. */
      readonly policy: string;
    };

export type LockEventType = LockEvent['type'];

/** The engine's event stream. Events are only built when someone listens. */
export class LockEventBus {
  private readonly subject = new Subject<LockEvent>();
  readonly events$: Observable<LockEvent> = this.subject.asObservable();

  get listening(): boolean {
    return this.subject.observed;
  }

  emit(event: LockEvent): void {
    this.subject.next(event);
  }

  complete(): void {
    this.subject.complete();
  }
}
