import { type EngineContext, stopWork } from '../store-calls/engine-context.js';
import type { KeyTable } from '../wait/wait.types.js';
import { leaseEnd } from '../request/lock-request.js';
import { traceExtend, tracing } from '../lock.events.js';
import { loseLock, type HeldLock, type HoldParts } from './held-lock.js';
import { LeaseWatchdog } from './lease-watchdog.js';

/**
 * The locks this engine holds, in the watchdog that renews them: what a held lock needs to end
 * itself (`parts`), and shutdown's view of them all.
 */
export class LockLeases {
  readonly parts: HoldParts;
  private readonly watchdog: LeaseWatchdog<HeldLock>;

  constructor(
    private readonly context: EngineContext,
    /** The acquirer's table, which holds a lock without a queue (see `HeldLock.queue`). */
    busyKeys: KeyTable,
  ) {
    this.watchdog = new LeaseWatchdog<HeldLock>({
      extend: (leases) => {
        const renew = () => context.storeCall(context.store.extend(leases), undefined, 'extend');
        if (!tracing.extends.hasSubscribers) return renew();
        const keys = leases.flatMap((lease) => lease.keys);
        return traceExtend({ keys, ttl: maxTtl(leases) }, renew);
      },
      renewed: (lease, ttl) => {
        // Checked first: 100,000 leases renew 100,000 times a second, mostly unheard.
        if (context.bus.observed)
          context.emit({ type: 'renewed', key: (lease as HeldLock).key, ttl });
      },
      lost: (lease, reason) => loseLock(lease as HeldLock, reason),
      leaseEnd: (sentAt, ttl) => leaseEnd(context.store, sentAt, ttl),
    });
    this.parts = { context, watchdog: this.watchdog, busyKeys };
  }

  get size(): number {
    return this.watchdog.size;
  }

  /**
   * Someone released `key` by force: every lock held here on it (of `token`, when given) is
   * lost, at once, so that its holder stops before another holder can get far.
   */
  forcedRelease(key: string, token: string | undefined): void {
    for (const lock of this.watchdog.leases()) {
      if (lock.fullKeys.includes(key) && (token === undefined || lock.token === token)) {
        loseLock(lock, 'vanished');
      }
    }
  }

  /** Shutdown begins: every holder is asked to stop, through its lock's `signal`. */
  abortAll(): void {
    for (const lock of this.watchdog.leases()) lock.abort(stopWork(lock.key));
  }

  /**
   * Shutdown: waits up to `timeout` ms for the holders to release their locks (each release goes
   * to the store as usual). Renewal then stops: a lock still held keeps its key until the lease
   * runs out, since deleting it would free the lock under code that still runs.
   */
  async drain(timeout: number): Promise<void> {
    if (this.watchdog.size > 0) {
      const waiting = { type: 'shutdown-waiting', keys: this.heldKeys(), timeout } as const;
      this.context.emit(waiting);
      this.context.config.log?.(waiting);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.watchdog.emptied(),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, timeout))),
      ]);
      clearTimeout(timer);
    }
    this.watchdog.stop();
  }

  /** The keys held now, each once (a semaphore may hold several permits of one key). */
  private heldKeys(): string[] {
    return [...new Set(this.watchdog.leases().map((lock) => lock.key))];
  }
}

function maxTtl(leases: readonly { readonly ttl: number }[]): number {
  return Math.max(...leases.map((lease) => lease.ttl));
}
