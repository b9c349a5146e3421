import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { Cluster, type Redis } from 'ioredis';
import type { LockStore } from '../../stores/lock-store.interface.js';
import { RedisLockStore } from '../../stores/redis/redis-lock.store.js';
import { RedlockLockStore } from '../../stores/redlock/redlock-lock.store.js';
import { LockService } from '../lock.service.js';

/** Options of `LockHealthIndicator.isHealthy`. */
export interface LockHealthOptions {
  /**
   * Longest wait for the store's answer, in ms: a store that does not answer by then is down.
   * @default 1000
   */
  timeout?: number;
}

/** What the indicator found, before it becomes terminus's up or down. */
interface Probe {
  readonly up: boolean;
  readonly details: Record<string, unknown>;
}

/**
 * A `@nestjs/terminus` health indicator for the lock store (terminus 11 and 12; an optional
 * peer). Up with the store's round-trip time; down when it does not answer within `timeout`.
 * For Redlock, how many nodes answer against the quorum (up while a quorum does); for Cluster,
 * the cluster state. An eviction policy that can drop lock keys is reported (as `degraded` on
 * terminus 12, in `warning` on 11).
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
    private readonly locks: LockService,
  ) {}

  async isHealthy<const Key extends string>(
    key: Key,
    { timeout = 1_000 }: LockHealthOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const session = this.health.check(key);
    const probe = await probeStore(this.locks.engine.store, timeout);
    if (!probe.up) return session.down(probe.details);
    const policy = probe.details.evictionPolicy;
    if (policy === undefined || policy === 'noeviction') return session.up(probe.details);
    const warning = `maxmemory-policy ${String(policy)} can evict lock keys: use noeviction.`;
    // terminus 12 has `degraded`: still serving, but impaired; terminus 11 only up and down.
    const report = { ...probe.details, warning };
    const degraded = (session as { degraded?: (data: object) => HealthIndicatorResult<Key> })
      .degraded;
    return degraded ? degraded.call(session, report) : session.up(report);
  }
}

async function probeStore(store: LockStore, timeout: number): Promise<Probe> {
  if (store instanceof RedlockLockStore) return probeRedlock(store, timeout);
  if (store instanceof RedisLockStore) return probeRedis(store.client, timeout);
  const answer = await timed(store.ping(), timeout);
  return { up: answer.ok, details: answer.ok ? { rtt: answer.rtt } : { message: answer.error } };
}

async function probeRedis(client: Redis | Cluster, timeout: number): Promise<Probe> {
  const answer = await ping(client, timeout);
  if (!answer.ok) return { up: false, details: { message: answer.error } };
  const details: Record<string, unknown> = { rtt: answer.rtt };
  if (client instanceof Cluster) {
    const info = await timed(client.cluster('INFO') as Promise<string>, timeout);
    const state = info.ok ? /cluster_state:(\w+)/.exec(info.value)?.[1] : undefined;
    details.clusterState = state ?? 'unknown';
    if (state !== 'ok') return { up: false, details };
  }
  const policy = await timed(
    client.config('GET', 'maxmemory-policy') as Promise<string[]>,
    timeout,
  );
  if (policy.ok) details.evictionPolicy = policy.value[1];
  return { up: true, details };
}

async function probeRedlock(store: RedlockLockStore, timeout: number): Promise<Probe> {
  const answers = await Promise.all(store.clients.map((client) => ping(client, timeout)));
  const nodesUp = answers.filter((answer) => answer.ok).length;
  const details = { nodesUp, nodes: answers.length, quorum: store.quorum };
  return { up: nodesUp >= store.quorum, details };
}

/** Statuses of a client that has lost its connection: a ping would only wait in its queue. */
const DISCONNECTED = new Set(['reconnecting', 'close', 'end']);

function ping(client: Redis | Cluster, timeout: number): Promise<Timed<string>> {
  if (DISCONNECTED.has(client.status))
    return Promise.resolve({ ok: false, error: `not connected (${client.status})` });
  return timed(client.ping(), timeout);
}

type Timed<T> =
  | { readonly ok: true; readonly value: T; readonly rtt: number }
  | { readonly ok: false; readonly error: string };

/** The call's answer and round trip, or why it failed: never longer than `timeout`. */
async function timed<T>(call: Promise<T>, timeout: number): Promise<Timed<T>> {
  const startedAt = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeout} ms`)), timeout);
  });
  try {
    const value = await Promise.race([call, late]);
    return { ok: true, value, rtt: Math.round((performance.now() - startedAt) * 100) / 100 };
  } catch (error) {
    call.catch(() => undefined);
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}
