import type {
  AcquireAttempt,
  AcquireRequest,
  ExtendResult,
  LeaseExtension,
  LockStore,
  ReleaseListener,
  ReleaseOptions,
  ReleaseReport,
  WaiterLists,
} from '../../lib/stores/lock-store.interface.js';

/**
 * A store that passes every call to a real one. Test stores extend it and override only the
 * calls they watch, so a new `LockStore` member needs forwarding in one place.
 */
export class ForwardingStore implements LockStore {
  constructor(protected readonly inner: LockStore) {}

  get kinds(): LockStore['kinds'] {
    return this.inner.kinds;
  }

  get waiters(): WaiterLists | undefined {
    const { waiters } = this.inner;
    return (
      waiters && { turnGrace: waiters.turnGrace, leave: (key, queue) => this.leave(key, queue) }
    );
  }

  /** Forwards `waiters.leave`; override to watch it. */
  leave(key: string, queue: string): void {
    this.inner.waiters?.leave(key, queue);
  }

  get inspector(): LockStore['inspector'] {
    return this.inner.inspector;
  }

  get supportsFencing(): boolean | undefined {
    return this.inner.supportsFencing;
  }

  checkKeys(keys: readonly string[]): void {
    this.inner.checkKeys?.(keys);
  }

  async init(): Promise<void> {
    await this.inner.init?.();
  }

  drift(ttl: number): number {
    return this.inner.drift?.(ttl) ?? 0;
  }

  tryAcquire(request: AcquireRequest): Promise<AcquireAttempt> {
    return this.inner.tryAcquire(request);
  }

  release(
    keys: readonly string[],
    token: string,
    options?: ReleaseOptions,
  ): Promise<ReleaseReport> {
    return this.inner.release(keys, token, options);
  }

  subscribe(key: string, onRelease: ReleaseListener): Promise<() => void> {
    return this.inner.subscribe(key, onRelease);
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
