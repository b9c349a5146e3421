import type { Redis } from 'ioredis';
import type {
  AcquireAttempt,
  AcquireRequest,
  ExtendResult,
  LeaseExtension,
  LockStore,
  ReleaseResult,
} from '../lock-store.interface.js';
import { closeConnection } from './close-connection.js';
import { channelOf, fenceKeyOf } from './key-slots.js';
import { ACQUIRE, EXTEND, RELEASE } from './redis-lock.scripts.js';
import { ReleaseNotifier } from './release-notifier.js';
import { runScript } from './script-runner.js';

export interface RedisLockStoreOptions {
  /** Close `client` when the store closes. Leave it `false` for a client you manage yourself. @default false */
  ownsClient?: boolean;
}

const releaseOutcome: Record<number, ReleaseResult> = {
  1: 'released',
  0: 'expired',
  [-1]: 'stolen',
};
const extendOutcome: Record<number, ExtendResult> = { 1: 'extended', 0: 'expired', [-1]: 'stolen' };

/**
 * A lock store on one Redis server (or a Sentinel-managed master), through an ioredis `Redis`
 * client. Its keys follow the common Redis lock protocol: the key's value is the owner token,
 * set with NX and a PX lease, so clients of other lock libraries can share the same locks.
 */
export class RedisLockStore implements LockStore {
  private readonly notifier: ReleaseNotifier;

  constructor(
    readonly client: Redis,
    private readonly options: RedisLockStoreOptions = {},
  ) {
    this.notifier = new ReleaseNotifier(() => {
      const connection = client.duplicate({ lazyConnect: false, enableOfflineQueue: true });
      return connection;
    });
  }

  async tryAcquire({ keys, token, ttl, fencing }: AcquireRequest): Promise<AcquireAttempt> {
    const scriptKeys = fencing ? [...keys, ...keys.map(fenceKeyOf)] : keys;
    const reply = (await runScript(this.client, ACQUIRE, scriptKeys, [
      token,
      ttl,
      fencing ? '1' : '0',
    ])) as number[];
    if (reply[0] === 1)
      return fencing ? { acquired: true, fences: reply.slice(1) } : { acquired: true };
    return { acquired: false, pttl: reply[1] };
  }

  async release(keys: readonly string[], token: string): Promise<ReleaseResult> {
    const reply = await runScript(this.client, RELEASE, keys, [
      token,
      'PUBLISH',
      ...keys.map(channelOf),
    ]);
    return releaseOutcome[reply as number];
  }

  async extend(leases: readonly LeaseExtension[]): Promise<ExtendResult[]> {
    const keys: string[] = [];
    const tokens: string[] = [];
    const ttls: number[] = [];
    for (const lease of leases) {
      for (const key of lease.keys) {
        keys.push(key);
        tokens.push(lease.token);
        ttls.push(lease.ttl);
      }
    }
    const codes = (await runScript(this.client, EXTEND, keys, [...tokens, ...ttls])) as number[];
    let next = 0;
    return leases.map((lease) => {
      const perKey = codes.slice(next, (next += lease.keys.length));
      return extendOutcome[Math.min(...perKey)];
    });
  }

  subscribe(key: string, onRelease: () => void): Promise<() => void> {
    return this.notifier.subscribe(channelOf(key), onRelease);
  }

  async ping(): Promise<void> {
    await this.client.ping();
  }

  async close(): Promise<void> {
    await this.notifier.close();
    if (this.options.ownsClient) await closeConnection(this.client);
  }
}
