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
  /**
   * Report the store down while any call is refused, a refused optional feature included
   * (fences without `+time`, semaphores without the holder-set commands, notifications without
   * the channels, ...). By default only a refusal that stops a plain mutex's acquire and release
   * makes it down; a refused feature is reported as `degraded` (terminus 12) or up (terminus
   * 11), with the refusal in `refused` and `warning`, as the mutexes still work.
   * @default false
   */
  strict?: boolean;
}

/**
 * A `@nestjs/terminus` health indicator for the lock store (terminus 11 and 12; an optional
 * peer). It reports the store's `health()` (a timed `ping` for a store without one): up with
 * the round trip (`rtt`), down with a `message` when the store does not answer within
 * `timeout`. For Redlock, how many nodes answer against the quorum (up while a quorum does); for
 * Cluster, the cluster state. Calls the store refused in the last minute in a way retrying
 * cannot fix (an ACL without a command, a key or a channel; see `LockStoreRefusedError`) are
 * listed in `refused`: one that stops a plain mutex's acquire and release (its commands, the
 * lock keys) makes it down, with the advice in `message`; one that stops an optional feature
 * only (fencing, semaphores and read-write locks, notifications, `replicas`) makes it
 * `degraded` on terminus 12 and up on 11, with the advice in `warning`, since the mutexes still
 * work (`strict: true` makes it down too). An eviction policy that can drop lock keys is
 * reported the same way; one the server refuses to tell (CONFIG and INFO denied) is `unknown`,
 * still up, with a `warning` that it could not be verified.
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
    { timeout = 1_000, strict = false }: LockHealthOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const session = this.health.check(key);
    const found = await (this.store.health?.(timeout) ?? pingHealth(this.store, timeout));
    const details = detailsOf(found);
    if (!found.up) return session.down(details);
    const refusals = this.locks?.engine.storeRefusals ?? [];
    const refused = refusals.map(({ error }) => `${error.refusal}: ${error.refused}`);
    const stopping = refusals.find(({ core }) => core || strict);
    if (stopping) return session.down({ ...details, message: stopping.error.message, refused });
    const eviction = evictionWarning(found.evictionPolicy);
    const warnings = [
      ...(eviction ? [eviction] : []),
      ...refusals.map(({ error }) => error.message),
    ];
    if (warnings.length === 0) return session.up(details);
    const report = {
      ...details,
      ...(refused.length > 0 && { refused }),
      warning: warnings.join(' '),
    };
    if (refused.length === 0 && found.evictionPolicy === 'unknown') return session.up(report);
    // terminus 12 has `degraded`: still serving, but impaired; terminus 11 only up and down.
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
