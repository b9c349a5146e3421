import { LockOptionsError } from '../../errors/lock.errors.js';
import type {
  AcquireAttempt,
  AcquireRequest,
  ExtendResult,
  LeaseExtension,
  LockStore,
  ReleaseListener,
  ReleaseOptions,
  ReleaseReport,
  SharedLockType,
  StoreHealth,
  WaiterLists,
} from '../lock-store.interface.js';
import { ConnectionState } from './connection-state.js';
import { evictionPolicyOf, redisHealth } from './redis-health.js';
import type { RedisLockStoreOptions } from './redis-lock-store-options.interface.js';
import { ReplicaWait } from './replica-wait.js';
import { extendLeases } from './lease-renewal.js';
import { ACQUIRED, channelOf, heldAs, memberLetter } from './redis-commands.js';
import { turnsKeyOf, writerKeyOf } from './redis-commands.js';
import { checkClusterKeys } from './cluster-slots.js';
import { LOOK_AT_HOLDER } from './scripts/acquire.scripts.js';
import { acquireHolder, acquireMutex } from './script-attempts.js';
import { TURN_GRACE } from '../../policy/wait-policy.js';
import type { PublishCommand } from './scripts/lua-script.js';
import { GIVE_BACK, LEAVE, RELEASE, RELEASE_UNWATCHED } from './scripts/release.scripts.js';
import { ReleaseNotifier } from './release-notifier.js';
import type { RedisArg, RedisClientPort } from './redis-client.port.js';
import { portOf, type RedisClient } from './redis-clients.js';
import { RedisLockInspector } from './lock-inspection.js';
import { RELEASE_HOLDER } from './scripts/holder-set.scripts.js';

/*
 * The Redis store: the `LockStore` contract on one server, a Sentinel master or a Cluster.
 */

const SHARED_KINDS: readonly SharedLockType[] = Object.freeze(['semaphore', 'read', 'write']);
const NO_RELEASE_OPTIONS: ReleaseOptions = Object.freeze({});
/** A release's outcome code (see `releaseReport`) as its result. */
const releaseOutcome = { 1: 'released', 0: 'expired', [-1]: 'stolen' } as const;

/**
 * A lock store on one Redis server, a Sentinel-managed master or a Redis Cluster, through an
 * ioredis, node-redis or Valkey GLIDE client (see redis-clients.ts and redis-client.port.ts).
 * Keys follow the common Redis lock protocol: the key's value is the owner token, set with NX
 * and a PX lease, so other lock libraries can share the locks.
 */
export class RedisLockStore implements LockStore {
  readonly kinds = SHARED_KINDS;
  readonly waiters: WaiterLists = {
    turnGrace: TURN_GRACE,
    leave: (key, queue) => this.leaveLists(key, queue),
  };
  /** With `replicas`, every grant must pass WAIT, which only `tryAcquire` runs. */
  readonly grantsOnlyOnAcquire: boolean;
  /** The client, as the store speaks to it. */
  readonly port: RedisClientPort;
  private readonly connection: ConnectionState;
  private readonly notifier: ReleaseNotifier;
  private readonly cluster: boolean;
  private readonly publish: PublishCommand;
  private readonly replicaWait?: ReplicaWait;
  /** Owners, holders and waiters of a key; `list` and `forceRelease` (see lock-inspection.ts). */
  readonly inspector: RedisLockInspector;

  constructor(
    client: RedisClient | RedisClientPort,
    private readonly options: RedisLockStoreOptions = {},
  ) {
    const port = (this.port = portOf(client));
    this.cluster = port.cluster;
    this.connection = new ConnectionState(port);
    this.publish = this.cluster ? 'SPUBLISH' : 'PUBLISH';
    if (this.cluster && options.replicas) {
      throw new LockOptionsError(
        '"replicas" (WAIT) is not available on Redis Cluster; use it with a single master or Sentinel.',
      );
    }
    if (options.replicas) this.replicaWait = new ReplicaWait(port, options.replicas);
    this.grantsOnlyOnAcquire = this.replicaWait !== undefined;
    this.notifier = new ReleaseNotifier(port);
    this.inspector = new RedisLockInspector(port, this.publish, this.notifier);
  }

  /** The client's object: an ioredis, node-redis or GLIDE client (`LOCK_REDIS_CLIENT`). */
  get client(): RedisClient {
    return this.port.client as RedisClient;
  }

  /** Resolves once `client` is there: a client the module makes is made after its library loads. */
  clientReady(): Promise<void> {
    return this.port.ready();
  }

  checkKeys(keys: readonly string[]): void {
    if (this.cluster) checkClusterKeys(keys);
  }

  async init(): Promise<void> {
    await this.port.ready();
    if (!this.replicaWait) return;
    // WAIT's check needs the server: an unreachable one is reported as such, not as a refusal.
    await this.ping();
    await this.replicaWait.check();
  }

  /**
   * Ready, not failed since, and able to write: most calls find it so, and read it here,
   * ahead of the connection's fuller account (see `ConnectionState.down`), which keeps
   * connection-state.ts off the uncontended path (decision 0012).
   */
  tryAcquire(request: AcquireRequest): Promise<AcquireAttempt> {
    if (this.port.writable() && !this.connection.failure) return this.attempt(request);
    // A user's client without an offline queue fails every command until it is ready.
    if (this.connection.connecting) {
      return this.connection.whenConnected().then(() => this.acquireNow(request));
    }
    return this.acquireNow(request);
  }

  private acquireNow(request: AcquireRequest): Promise<AcquireAttempt> {
    return this.connection.down ? this.connection.refuse() : this.attempt(request);
  }

  /** The attempt, then WAIT for a grant with `replicas`. */
  private attempt(request: AcquireRequest): Promise<AcquireAttempt> {
    const attempt = this.attemptOnce(request);
    const { replicaWait } = this;
    if (!replicaWait) return attempt;
    const { keys, token, kind } = request;
    const giveBack = (): Promise<unknown> => this.release(keys, token, { kind });
    return attempt.then((won) => replicaWait.confirm(won, keys, giveBack));
  }

  private attemptOnce(request: AcquireRequest): Promise<AcquireAttempt> {
    const { keys, token, ttl, fencing, queue, kind } = request;
    if (kind && kind.type !== 'mutex') return acquireHolder(this.port, request, kind);
    // The common case, as plain `SET NX PX`: no script to run.
    if (keys.length === 1 && queue === undefined && !fencing) {
      return this.acquireBySet(keys[0], token, ttl);
    }
    return acquireMutex(this.port, request);
  }

  /** Not async, and the holder's lease is read only when busy: this is every uncontended lock. */
  private acquireBySet(key: string, token: string, ttl: number): Promise<AcquireAttempt> {
    // Read as parsed; a busy key's PTTL is asked after the parse, not from the reply's loop.
    return this.port.send('set', [key, token, 'PX', ttl, 'NX'], (reply) =>
      reply === 'OK'
        ? ACQUIRED
        : Promise.resolve(key).then((busy) => this.busyAttempt(busy, token)),
    ) as Promise<AcquireAttempt>;
  }

  private async busyAttempt(key: string, token: string): Promise<AcquireAttempt> {
    const pttl = await this.port.script<number | [string]>(LOOK_AT_HOLDER, [key], [token]);
    if (Array.isArray(pttl)) return heldAs(pttl[0]);
    // Our own token: this SET was applied already, then resent after a reconnect.
    if (pttl === -3) return ACQUIRED;
    // -2: released in between, so try again at once.
    return { acquired: false, pttl: pttl === -2 ? 0 : pttl };
  }

  release(
    keys: readonly string[],
    token: string,
    { quiet = false, requeue = '', successor, kind }: ReleaseOptions = NO_RELEASE_OPTIONS,
  ): Promise<ReleaseReport> {
    // Not refused while the connection is down: a give-back must land once it is back.
    const read = this.reportOf(keys);
    const { port } = this;
    if (kind && kind.type !== 'mutex') {
      const args = [memberLetter[kind.type] + token, quiet ? '1' : '0'];
      const script = RELEASE_HOLDER[this.publish];
      return port.script(script, [keys[0], turnsKeyOf(keys[0])], args, read);
    }
    if (quiet) return port.script(GIVE_BACK, keys, [token], read);
    const single = keys.length === 1;
    // Nobody waits here: one call, which hands a key marked by waiters elsewhere on.
    if (single && !requeue && !successor) {
      return port.script(RELEASE_UNWATCHED[this.publish], keys, [token], read);
    }
    // The optional arguments are sent only when someone waits here.
    const args: RedisArg[] = single ? [requeue, successor?.token ?? '', successor?.ttl ?? 0] : [];
    const scriptKeys = [...keys, ...keys.map(turnsKeyOf)];
    return port.script(RELEASE[this.publish], scriptKeys, [token, ...args], read);
  }

  /**
   * Reads a release's integer reply (see RELEASE's comment) as a report; the notifications it
   * sent are counted against our own listeners, so that it tells whether others wait.
   */
  private reportOf(keys: readonly string[]): (reply: unknown) => ReleaseReport {
    return (reply) => {
      const code = reply as number;
      const subscribers = Math.floor(code / 16);
      return {
        result: releaseOutcome[((code % 4) - 1) as 1 | 0 | -1],
        succeeded: (code & 4) !== 0,
        waitersElsewhere: (code & 8) !== 0 || (subscribers > 0 && this.others(keys, subscribers)),
      };
    };
  }

  /** Some of a release's `subscribers` are in other processes than this one. */
  private others(keys: readonly string[], subscribers: number): boolean {
    return subscribers > keys.filter((key) => this.notifier.isSubscribed(channelOf(key))).length;
  }

  private leaveLists(key: string, queue: string): void {
    const keys = [key, turnsKeyOf(key), writerKeyOf(key)];
    this.port.script(LEAVE[this.publish], keys, [queue]).catch(() => undefined);
  }

  async extend(leases: readonly LeaseExtension[]): Promise<ExtendResult[]> {
    if (this.connection.down) return this.connection.refuse();
    return extendLeases(this.port, leases);
  }

  subscribe(key: string, onRelease: ReleaseListener): Promise<() => void> {
    return this.notifier.subscribe(channelOf(key), onRelease);
  }

  get endpoint(): string {
    return this.port.endpoint();
  }

  /** Fails as soon as the connection is found down, rather than wait to reconnect. */
  async ping(): Promise<void> {
    await this.connection.whenConnected();
    await this.connection.untilDown(() => this.port.send('ping', []));
  }

  readonly health = (timeout: number): Promise<StoreHealth> =>
    redisHealth(this.port, timeout, this.connection.failure);

  readonly evictionPolicy = (): Promise<string | undefined> => evictionPolicyOf(this.port);

  /** Closes the subscriber and, if the module made it, the client: together, each bounded. */
  async close(): Promise<void> {
    this.connection.dispose();
    const client = this.options.ownsClient ? this.port.close() : undefined;
    await Promise.all([this.notifier.close(), client]);
  }
}
