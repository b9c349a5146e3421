import type { Redis } from 'ioredis';

/**
 * The lock the canaries use to show a fault really bites: plain `SET NX` (with `PX` when given a
 * ttl), no renewal, no signal, and a holder that judges its lease by the wall clock. It is what
 * the library's protections are measured against, so it must stay this naive.
 */
export class NaiveLock {
  private constructor(
    readonly key: string,
    readonly value: string,
    /** `Date.now()` when taken: what a wall-clock lease check counts from. */
    readonly acquiredAt: number,
    readonly ttl: number | undefined,
  ) {}

  /** The lock, or `undefined` when the key is already set. */
  static async take(
    client: Redis,
    key: string,
    value: string,
    ttl?: number,
  ): Promise<NaiveLock | undefined> {
    const acquiredAt = Date.now();
    const reply =
      ttl === undefined
        ? await client.set(key, value, 'NX')
        : await client.set(key, value, 'PX', ttl, 'NX');
    return reply === 'OK' ? new NaiveLock(key, value, acquiredAt, ttl) : undefined;
  }

  /** The holder's belief, from its own wall clock: nothing in Redis is asked. */
  believesHeld(): boolean {
    return this.ttl === undefined || Date.now() < this.acquiredAt + this.ttl;
  }

  /** Whether Redis still has this holder's value under the key. */
  async heldInRedis(client: Redis): Promise<boolean> {
    return (await client.get(this.key)) === this.value;
  }
}
