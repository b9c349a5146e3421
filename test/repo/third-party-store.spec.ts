import type {
  AcquireAttempt,
  AcquireRequest,
  ExtendResult,
  LeaseExtension,
  LockStore,
  ReleaseListener,
  ReleaseOptions,
  ReleaseReport,
} from 'nestjs-distributed-lock/store';
import { describeStoreContract } from '../harness/store-contract.js';

/**
 * A store as a third party would write it, from the package's public exports only: the core
 * contract (a mutex with leases, fences and release notifications) over a plain Map, offering
 * none of the optional capabilities.
 */
class MapLockStore implements LockStore {
  private readonly leases = new Map<string, { token: string; endsAt: number }>();
  private readonly fences = new Map<string, number>();
  private readonly listeners = new Map<string, Set<ReleaseListener>>();

  async tryAcquire({ keys, token, ttl, fencing }: AcquireRequest): Promise<AcquireAttempt> {
    const busy = keys.map((key) => this.holder(key)).filter((lease) => lease !== undefined);
    if (busy.length > 0) {
      return { acquired: false, pttl: Math.max(...busy.map((lease) => lease.endsAt - Date.now())) };
    }
    for (const key of keys) this.leases.set(key, { token, endsAt: Date.now() + ttl });
    if (!fencing) return { acquired: true };
    return { acquired: true, fences: keys.map((key) => this.nextFence(key)) };
  }

  async release(
    keys: readonly string[],
    token: string,
    options?: ReleaseOptions,
  ): Promise<ReleaseReport> {
    const found = keys.map((key) => this.holder(key));
    if (found.some((lease) => lease && lease.token !== token)) {
      return { result: 'stolen', waitersElsewhere: false };
    }
    keys.forEach((key) => this.leases.delete(key));
    if (!options?.quiet) keys.forEach((key) => this.listeners.get(key)?.forEach((hear) => hear()));
    const released = found.every((lease) => lease !== undefined);
    return { result: released ? 'released' : 'expired', waitersElsewhere: false };
  }

  async extend(leases: readonly LeaseExtension[]): Promise<ExtendResult[]> {
    return leases.map(({ keys, token, ttl }) => {
      const found = keys.map((key) => this.holder(key));
      if (found.some((lease) => lease && lease.token !== token)) return 'stolen';
      if (found.some((lease) => lease === undefined)) return 'expired';
      found.forEach((lease) => (lease!.endsAt = Date.now() + ttl));
      return 'extended';
    });
  }

  async subscribe(key: string, onRelease: ReleaseListener): Promise<() => void> {
    const set = this.listeners.get(key) ?? new Set();
    this.listeners.set(key, set.add(onRelease));
    return () => set.delete(onRelease);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    this.listeners.clear();
  }

  private holder(key: string): { token: string; endsAt: number } | undefined {
    const lease = this.leases.get(key);
    return lease && lease.endsAt > Date.now() ? lease : undefined;
  }

  private nextFence(key: string): number {
    const fence = (this.fences.get(key) ?? 0) + 1;
    this.fences.set(key, fence);
    return fence;
  }
}

describeStoreContract('a third-party store built on the public exports', () => new MapLockStore());
