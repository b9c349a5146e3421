import { newLockToken, queueKey, type LockRequest } from '../request/lock-request.js';
import type { LockKind } from '../../stores/lock-store.interface.js';
import { LocalHandoffs } from './local-handoffs.js';
import { PendingCalls } from './pending-calls.js';
import type { QueueDriver, Waiter } from './wait.types.js';
import { WakeLatch } from './wake-latch.js';

/**
 * What a `WaitQueue` knows: its keys and kind, its waiters in order, how many locks of it this
 * process holds, and how the lock moved here lately. `WaitQueue` adds what it does with them.
 */
export abstract class QueueState {
  protected readonly waiters: Waiter[] = [];
  protected readonly latch = new WakeLatch();
  private queueId?: string;
  /** Locks on this queue's keys held by this process. */
  protected holders = 0;
  protected running = false;
  protected unsubscribe?: () => void;
  protected readonly pending = new PendingCalls();
  protected readonly handoffs: LocalHandoffs;
  /** The head's last attempt failed, so the store may have this queue in its turn list. */
  protected inLine = false;
  /** This queue's entry in the busy keys table (see `queueKey`). */
  protected readonly busyKey: string;
  /** The store's keys this queue waits for (prefix applied). */
  readonly keys: readonly string[];
  /** The keys as the caller named them, for messages. */
  readonly label: string;
  readonly kind: LockKind;
  /** How many locks of the queue this process may hold at once (see `holdersPerProcess`). */
  protected readonly capacity: number;

  constructor(
    protected readonly driver: QueueDriver,
    { fullKeys, label, kind }: LockRequest,
  ) {
    this.keys = fullKeys;
    this.busyKey = queueKey({ fullKeys, kind });
    this.label = label;
    this.kind = kind;
    this.capacity = holdersPerProcess(kind);
    this.handoffs = new LocalHandoffs(driver.localHandoffs, this.capacity);
  }

  /** Names this queue in the store's turn list and in notifications of whose turn it is. */
  get id(): string {
    // Made on first use: most queues live for one uncontended lock and never need it.
    return (this.queueId ??= newLockToken());
  }

  /** True when an attempt may skip the queue: nobody here holds, waits or tries. */
  get free(): boolean {
    return this.holders === 0 && this.pending.outside === 0 && this.waiters.length === 0;
  }

  /** True when this process holds as many locks of the queue as it may. */
  get full(): boolean {
    return this.holders >= this.capacity;
  }

  /** The lock held here was handed off by another holder here (see `LocalHandoffs`). */
  get handedOff(): boolean {
    return this.handoffs.handedOff;
  }

  /** True while some waiter here still wants the lock. */
  get waiting(): boolean {
    return this.waiters.length > 0;
  }

  /** How many requests wait in this queue (for `inspect`). */
  get waiterCount(): number {
    return this.waiters.length;
  }
}

/** How many locks of this kind one process may hold on the key at once. */
function holdersPerProcess(kind: LockKind): number {
  if (kind.type === 'semaphore') return kind.limit;
  return kind.type === 'read' ? Infinity : 1;
}
