import type {
  AcquireAttempt,
  AcquireRequest,
  ExtendResult,
  LeaseExtension,
  LockStore,
  ReleaseListener,
  ReleaseOptions,
  ReleaseReport,
} from '../../lib/stores/lock-store.interface.js';

/**
 * A real store with a window on it: counts acquire attempts and calls `onParked` when an
 * attempt fails while a release subscription is active. From that moment the waiter can only
 * be woken by a release notification or by its poll timer, which is what hand-off tests need
 * to know before they release. `muted` drops release notifications (the subscription itself
 * stays real), to show what waiting costs without them.
 */
export class ObservedStore implements LockStore {
  attempts = 0;
  muted = false;
  onParked: () => void = () => undefined;
  private subscriptions = 0;

  constructor(private readonly inner: LockStore) {}

  async tryAcquire(request: AcquireRequest): Promise<AcquireAttempt> {
    const subscribed = this.subscriptions > 0;
    const result = await this.inner.tryAcquire(request);
    this.attempts++;
    if (!result.acquired && subscribed) this.onParked();
    return result;
  }

  async subscribe(key: string, onRelease: ReleaseListener): Promise<() => void> {
    const listener = this.muted ? () => undefined : onRelease;
    const unsubscribe = await this.inner.subscribe(key, listener);
    this.subscriptions++;
    let active = true;
    return () => {
      if (active) this.subscriptions--;
      active = false;
      unsubscribe();
    };
  }

  release(
    keys: readonly string[],
    token: string,
    options?: ReleaseOptions,
  ): Promise<ReleaseReport> {
    return this.inner.release(keys, token, options);
  }

  get turnGrace(): number | undefined {
    return this.inner.turnGrace;
  }

  leaveTurns(key: string, queue: string): void {
    this.inner.leaveTurns?.(key, queue);
  }

  extend(leases: readonly LeaseExtension[]): Promise<ExtendResult[]> {
    return this.inner.extend(leases);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
