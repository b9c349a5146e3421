import { Cluster, type Redis } from 'ioredis';
import { LockKeyError, LockOptionsError, LockStoreError } from '../../errors/lock.errors.js';
import type {
  AcquireAttempt,
  AcquireRequest,
  ExtendResult,
  LeaseExtension,
  LockStore,
  ReleaseListener,
  ReleaseOptions,
  ReleaseReport,
} from '../lock-store.interface.js';
import { closeConnection } from './close-connection.js';
import { clusterSlot } from './cluster-slot.js';
import { channelOf, fenceKeyOf, turnsKeyOf } from './key-slots.js';
import { ACQUIRE, ACQUIRE_IN_TURN, EXTEND, LEAVE_TURNS, RELEASE } from './redis-lock.scripts.js';
import { ReleaseNotifier } from './release-notifier.js';
import { runScript } from './script-runner.js';
import { corkingSender, directSender, type CommandSender } from './command-sender.js';

/** Ask replicas to acknowledge each acquire before it counts (Redis `WAIT`). */
export interface ReplicaAcknowledgement {
  /** How many replicas must have the lock key before the acquire succeeds. */
  readonly count: number;
  /** How long to wait for them, in ms. @default 100 */
  readonly timeout?: number;
}

export interface RedisLockStoreOptions {
  /** Close `client` when the store closes. Leave it `false` for a client you manage yourself. @default false */
  ownsClient?: boolean;
  /**
   * Roll back any acquire that fewer than `count` replicas acknowledged within `timeout` (Redis
   * `WAIT`, on the connection that set the key). This narrows, but does not close, the window
   * in which a failover loses a lock: WAIT is not consensus. Not available on Redis Cluster.
   * @default undefined
   */
  replicas?: ReplicaAcknowledgement;
}

const outcome = { 1: 'released', 0: 'expired', [-1]: 'stolen' } as const;
/**
 * How long a key given to a process in its turn stays reserved for it, in ms. A process that
 * died, or stopped waiting, holds up the others no longer than this.
 */
const TURN_GRACE = 500;
/** How long a key's turn list outlives its last arrival, in ms (a live waiter re-arrives sooner). */
const TURNS_LIFETIME = 60_000;
const extendOutcome = { 1: 'extended', 0: 'expired', [-1]: 'stolen' } as const;

/**
 * A lock store on one Redis server, a Sentinel-managed master (an ioredis `Redis`) or a Redis
 * Cluster (an ioredis `Cluster`). Keys follow the common Redis lock protocol: the key's value
 * is the owner token, set with NX and a PX lease, so other lock libraries can share the locks.
 */
export class RedisLockStore implements LockStore {
  readonly turnGrace = TURN_GRACE;
  private readonly notifier: ReleaseNotifier;
  private readonly cluster: boolean;
  private readonly send: CommandSender;

  constructor(
    readonly client: Redis | Cluster,
    private readonly options: RedisLockStoreOptions = {},
  ) {
    this.cluster = client instanceof Cluster;
    this.send = this.cluster ? directSender(client) : corkingSender(client as Redis);
    if (this.cluster && options.replicas) {
      throw new LockOptionsError(
        '"replicas" (WAIT) is not available on Redis Cluster; use it with a single master or Sentinel.',
      );
    }
    this.notifier = this.cluster
      ? new ReleaseNotifier(
          // The subscriber queues commands until it is connected, whatever the user's client does.
          () =>
            (client as Cluster).duplicate([], {
              shardedSubscribers: true,
              enableOfflineQueue: true,
            }),
          true,
        )
      : new ReleaseNotifier(() => (client as Redis).duplicate({ enableOfflineQueue: true }), false);
  }

  checkKeys(keys: readonly string[]): void {
    if (!this.cluster) return;
    const stray = keys.find((key) => clusterSlot(fenceKeyOf(key)) !== clusterSlot(key));
    if (stray !== undefined) {
      throw new LockKeyError(
        `Lock key "${stray}" has braces that are not a Redis Cluster hash tag, so its fence counter and ` +
          'release channel cannot share its slot. Use braces only as a hash tag: "{tag}".',
        stray,
      );
    }
    if (new Set(keys.map(clusterSlot)).size <= 1) return;
    throw new LockKeyError(
      `Lock keys ${keys.map((key) => `"${key}"`).join(', ')} fall in different Redis Cluster slots, so they ` +
        'cannot be locked atomically. Give them one hash tag, e.g. "order:{42}:items" and "order:{42}:payment".',
      keys.join(' + '),
    );
  }

  async init(): Promise<void> {
    if (!this.options.replicas) return;
    try {
      await (this.client as Redis).wait(0, 0);
    } catch (error) {
      throw new LockOptionsError(
        `"replicas" needs the Redis WAIT command, which this server refused (${(error as Error).message}). ` +
          'Managed Redis services often disable it: remove the "replicas" option there.',
      );
    }
  }

  async tryAcquire({ keys, token, ttl, fencing, queue }: AcquireRequest): Promise<AcquireAttempt> {
    const reply =
      queue !== undefined && keys.length === 1
        ? await this.acquireInTurn(keys[0], token, ttl, fencing, queue)
        : fencing || keys.length > 1
          ? await this.acquireByScript(keys, token, ttl, fencing)
          : await this.acquireBySet(keys[0], token, ttl);
    if (reply[0] !== 1) return { acquired: false, pttl: reply[1] };
    if (this.options.replicas) await this.awaitReplicas(keys, token, this.options.replicas);
    return fencing ? { acquired: true, fences: reply.slice(1) } : { acquired: true };
  }

  /** The common case, as plain `SET NX PX`: no script to run. The holder's lease is read only when busy. */
  private async acquireBySet(key: string, token: string, ttl: number): Promise<number[]> {
    if ((await this.send('set', [key, token, 'PX', ttl, 'NX'])) === 'OK') return [1];
    const pttl = (await this.send('pttl', [key])) as number;
    // -2: released in between, so try again at once.
    return [0, pttl === -2 ? 0 : pttl];
  }

  private async acquireByScript(
    keys: readonly string[],
    token: string,
    ttl: number,
    fencing: boolean,
  ): Promise<number[]> {
    const scriptKeys = fencing ? [...keys, ...keys.map(fenceKeyOf)] : keys;
    return (await runScript(this.send, ACQUIRE, scriptKeys, [
      token,
      ttl,
      fencing ? '1' : '0',
    ])) as number[];
  }

  private async acquireInTurn(
    key: string,
    token: string,
    ttl: number,
    fencing: boolean,
    queue: string,
  ): Promise<number[]> {
    const scriptKeys = [key, turnsKeyOf(key), ...(fencing ? [fenceKeyOf(key)] : [])];
    const args = [token, ttl, queue, fencing ? '1' : '0', TURNS_LIFETIME];
    return (await runScript(this.send, ACQUIRE_IN_TURN, scriptKeys, args)) as number[];
  }

  async release(
    keys: readonly string[],
    token: string,
    { quiet = false, requeue = '', successor }: ReleaseOptions = {},
  ): Promise<ReleaseReport> {
    const single = keys.length === 1;
    const channels = keys.map(channelOf);
    const args = [token, quiet ? '' : this.publish, single ? requeue : '', TURN_GRACE];
    args.push(single && successor ? successor.token : '', successor?.ttl ?? 0, ...channels);
    const reply = await runScript(this.send, RELEASE, [...keys, ...keys.map(turnsKeyOf)], args);
    const [code, subscribers, turns, succeeded] = reply as [1 | 0 | -1, number, number, number];
    const ours = channels.filter((channel) => this.notifier.isSubscribed(channel)).length;
    return {
      result: outcome[code],
      waitersElsewhere: turns > 0 || subscribers > ours,
      succeeded: succeeded === 1,
    };
  }

  leaveTurns(key: string, queue: string): void {
    const args = [queue, this.publish, channelOf(key), TURN_GRACE];
    runScript(this.send, LEAVE_TURNS, [key, turnsKeyOf(key)], args).catch(() => undefined);
  }

  private get publish(): string {
    return this.cluster ? 'SPUBLISH' : 'PUBLISH';
  }

  async extend(leases: readonly LeaseExtension[]): Promise<ExtendResult[]> {
    const perKey = await Promise.all(this.bySlot(leases).map((batch) => this.extendBatch(batch)));
    const results = new Map(perKey.flat());
    return leases.map((lease) => {
      const worst = Math.min(...lease.keys.map((key) => results.get(`${lease.token}\n${key}`)!));
      return extendOutcome[worst as 1 | 0 | -1];
    });
  }

  subscribe(key: string, onRelease: ReleaseListener): Promise<() => void> {
    return this.notifier.subscribe(channelOf(key), onRelease);
  }

  async ping(): Promise<void> {
    await this.client.ping();
  }

  async close(): Promise<void> {
    await this.notifier.close();
    if (this.options.ownsClient) await closeConnection(this.client);
  }

  /** One script call renews many leases; on a cluster, one call per slot. */
  private async extendBatch(batch: readonly LeaseExtension[]): Promise<[string, number][]> {
    const keys = batch.flatMap((lease) => lease.keys);
    const tokens = batch.flatMap((lease) => lease.keys.map(() => lease.token));
    const ttls = batch.flatMap((lease) => lease.keys.map(() => lease.ttl));
    const codes = (await runScript(this.send, EXTEND, keys, [...tokens, ...ttls])) as number[];
    return codes.map((code, i) => [`${tokens[i]}\n${keys[i]}`, code]);
  }

  private bySlot(leases: readonly LeaseExtension[]): LeaseExtension[][] {
    if (!this.cluster) return [[...leases]];
    const groups = new Map<number, LeaseExtension[]>();
    for (const lease of leases) {
      const slot = clusterSlot(lease.keys[0]);
      const group = groups.get(slot);
      if (group) group.push(lease);
      else groups.set(slot, [lease]);
    }
    return [...groups.values()];
  }

  /** WAIT on the connection that set the key; roll the acquire back if too few replicas have it. */
  private async awaitReplicas(
    keys: readonly string[],
    token: string,
    { count, timeout = 100 }: ReplicaAcknowledgement,
  ) {
    const acknowledged = await (this.client as Redis).wait(count, timeout);
    if (acknowledged >= count) return;
    await this.release(keys, token);
    throw new LockStoreError(
      keys.join(' + '),
      `only ${acknowledged} of the ${count} required replicas acknowledged the lock within ${timeout} ms, so it was ` +
        'rolled back. Check the replicas, or lower "replicas.count".',
    );
  }
}
