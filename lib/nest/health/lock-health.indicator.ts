import { Inject, Injectable, Optional } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import type { LockStore, StoreHealth } from '../../stores/lock-store.interface.js';
import { pingHealth } from '../../stores/store-health.js';
import { LOCK_STORE } from '../lock-store.tokens.js';
import { LockService } from '../lock.service.js';

/** Options of `LockHealthIndicator.isHealthy`. */
export interface LockHealthOptions {
  /**
   * Longest wait for the store's answer, in ms: a store that does not answer by then is down.
   * @default 1000
   */
  timeout?: number;
}

/**
 * A `@nestjs/terminus` health indicator for the lock store (terminus 11 and 12; an optional
 * peer). It reports the store's `health()` (a timed `ping` for a store without one): up with
 * the round trip (`rtt`), down with a `message` when the store does not answer within
 * `timeout`. For Redlock, how many nodes answer against the quorum (up while a quorum does); for
 * Cluster, the cluster state. Calls the store refused in the last minute in a way retrying
 * cannot fix (an ACL without a command, a key or a channel; see `LockStoreRefusedError`) make it
 * down, with the advice in `message` and each kind in `refused`: the store answers, but locks
 * fail until it is fixed. An eviction policy that can drop lock keys is reported (as `degraded`
 * on terminus 12, in `warning` on 11); one the server refuses to tell (CONFIG and INFO denied)
 * is `unknown`, still up, with a `warning` that it could not be verified.
 *
 * ```ts
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.locks.isHealthy('locks')]); }
 * ```
 */
@Injectable()
export class LockHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    @Inject(LOCK_STORE) private readonly store: LockStore,
    // Where the refusals are heard; absent when the store was provided without LockModule.
    @Optional() private readonly locks?: LockService,
  ) {}

  async isHealthy<const Key extends string>(
    key: Key,
    { timeout = 1_000 }: LockHealthOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const session = this.health.check(key);
    const found = await (this.store.health?.(timeout) ?? pingHealth(this.store, timeout));
    const details = detailsOf(found);
    if (!found.up) return session.down(details);
    const refusals = this.locks?.engine.storeRefusals ?? [];
    if (refusals.length > 0) {
      const refused = refusals.map((error) => `${error.refusal}: ${error.refused}`);
      return session.down({ ...details, message: refusals[0]!.message, refused });
    }
    const warning = evictionWarning(found.evictionPolicy);
    if (warning === undefined) return session.up(details);
    if (found.evictionPolicy === 'unknown') return session.up({ ...details, warning });
    // terminus 12 has `degraded`: still serving, but impaired; terminus 11 only up and down.
    const report = { ...details, warning };
    const degraded = (session as { degraded?: (data: object) => HealthIndicatorResult<Key> })
      .degraded;
    return degraded ? degraded.call(session, report) : session.up(report);
  }
}

/** What the eviction policy leaves to check, if anything. */
function evictionWarning(policy: string | undefined): string | undefined {
  if (policy === undefined || policy === 'noeviction') return undefined;
  if (policy === 'unknown') {
    return 'cannot verify the eviction policy (the server refused CONFIG GET and INFO, or did not answer): make sure it is noeviction.';
  }
  return `maxmemory-policy ${policy} can evict lock keys: use noeviction.`;
}

/** The terminus details: the names this indicator has always reported, set fields only. */
function detailsOf(health: StoreHealth): Record<string, unknown> {
  const { roundTripMs, error, quorum, cluster, evictionPolicy } = health;
  return {
    ...(error !== undefined && { message: error }),
    ...(roundTripMs !== undefined && { rtt: roundTripMs }),
    ...(quorum && { nodesUp: quorum.reachable, nodes: quorum.nodes, quorum: quorum.needed }),
    ...(cluster && { clusterState: cluster.state }),
    ...(evictionPolicy !== undefined && { evictionPolicy }),
  };
}
