import type {
  AcquireAttempt,
  AcquireRequest,
  LockStore,
  ReleaseListener,
} from '../../lib/stores/lock-store.interface.js';
import { ForwardingStore } from './forwarding-store.js';

/**
 * A real store with a window on it: counts acquire attempts and calls `onParked` when an
 * attempt fails while a release subscription is active. From that moment the waiter can only
 * be woken by a release notification or by its poll timer, which is what hand-off tests need
 * to know before they release. `muted` drops release notifications (the subscription itself
 * stays real), to show what waiting costs without them.
 */
export class ObservedStore extends ForwardingStore {
  attempts = 0;
  muted = false;
  onParked: () => void = () => undefined;
  private subscriptions = 0;

  constructor(inner: LockStore) {
    super(inner);
  }

  override async tryAcquire(request: AcquireRequest): Promise<AcquireAttempt> {
    const subscribed = this.subscriptions > 0;
    const result = await this.inner.tryAcquire(request);
    this.attempts++;
    if (!result.acquired && subscribed) this.onParked();
    return result;
  }

  override async subscribe(key: string, onRelease: ReleaseListener): Promise<() => void> {
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
}
