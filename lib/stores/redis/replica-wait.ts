import { LockOptionsError, LockStoreError } from '../../errors/lock.errors.js';
import type { AcquireAttempt } from '../lock-store.interface.js';
import type { ReplicaAcknowledgement } from './redis-lock-store-options.interface.js';
import type { RedisClientPort } from './redis-client.port.js';

/**
 * The store's `replicas` option: a won acquire counts once enough replicas have the key (Redis
 * `WAIT`, on the connection that set it), and is rolled back otherwise.
 */
export class ReplicaWait {
  constructor(
    private readonly port: RedisClientPort,
    private readonly settings: ReplicaAcknowledgement,
  ) {}

  /** At startup: managed services often refuse WAIT, which must fail bootstrap, not each lock. */
  async check(): Promise<void> {
    try {
      await this.port.send('wait', [0, 0]);
    } catch (error) {
      throw new LockOptionsError(
        `"replicas" needs the Redis WAIT command, which this server refused (${(error as Error).message}). ` +
          'Managed Redis services often disable it: remove the "replicas" option there.',
      );
    }
  }

  /** `attempt` once the replicas have a won key; else `rollBack` runs and the acquire fails. */
  async confirm(
    attempt: AcquireAttempt,
    keys: readonly string[],
    rollBack: () => Promise<unknown>,
  ): Promise<AcquireAttempt> {
    if (!attempt.acquired) return attempt;
    const { count, timeout = 100 } = this.settings;
    const acknowledged = (await this.port.send('wait', [count, timeout])) as number;
    if (acknowledged >= count) return attempt;
    await rollBack();
    throw new LockStoreError(
      keys.join(' + '),
      `only ${acknowledged} of the ${count} required replicas acknowledged the lock within ${timeout} ms, so it was ` +
        'rolled back. Check the replicas, or lower "replicas.count".',
      // The master answered: this is not an outage of the store.
      Object.assign(new Error(`WAIT ${count} ${timeout} returned ${acknowledged}`), {
        name: 'ReplicasBehindError',
      }),
    );
  }
}
