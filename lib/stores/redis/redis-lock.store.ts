import { Cluster, type Redis } from 'ioredis';
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
import { closeConnection } from './close-connection.js';
import { ConnectionState } from './connection-state.js';
import { endpointOf } from './endpoint.js';
import { evictionPolicyOf, redisHealth } from './redis-health.js';
import type { RedisLockStoreOptions } from './redis-lock-store-options.interface.js';
import { ReplicaWait } from './replica-wait.js';
import { extendLeases } from './lease-renewal.js';
import { channelOf, turnsKeyOf, writerKeyOf } from './redis-commands.js';
import { checkClusterKeys } from './cluster-slots.js';
import { LOOK_AT_HOLDER } from './scripts/acquire.scripts.js';
import { acquireHolder, acquireMutex } from './script-attempts.js';
import { socketClosed } from './ioredis-internals.js';
import { TURN_GRACE } from '../../policy/wait-policy.js';
import type { PublishCommand } from './scripts/lua-script.js';
import { GIVE_BACK, LEAVE, RELEASE, RELEASE_UNWATCHED } from './scripts/release.scripts.js';
import { notifierFor, type ReleaseNotifier } from './release-notifier.js';
import {
  runScript,
  ACQUIRED,
  heldAs,
  memberLetter,
  releaseReport,
  corkingSender,
  directSender,
  type CommandSender,
  type RedisArg,
} from './redis-commands.js';
import { RedisLockInspector } from './lock-inspection.js';
import { RELEASE_HOLDER } from './scripts/holder-set.scripts.js';

/*
 * The Redis store: the `LockStore` contract on one server, a Sentinel master or a Cluster.
 */

const SHARED_KINDS: readonly SharedLockType[] = Object.freeze(['semaphore', 'read', 'write']);
const NO_RELEASE_OPTIONS: ReleaseOptions = Object.freeze({});

/**
 * A lock store on one Redis server, a Sentinel-managed master (an ioredis `Redis`) or a Redis
 * Cluster (an ioredis `Cluster`). Keys follow the common Redis lock protocol: the key's value
 * is the owner token, set with NX and a PX lease, so other lock libraries can share the locks.
 */
export class RedisLockStore implements LockStore {
  readonly kinds = SHARED_KINDS;
  readonly waiters: WaiterLists = {
    turnGrace: TURN_GRACE,
    leave: (key, queue) => this.leaveLists(key, queue),
  };
  /** With `replicas`, every grant must pass WAIT, which only `tryAcquire` runs. */
  readonly grantsOnlyOnAcquire: boolean;
  private readonly connection: ConnectionState;
  private readonly notifier: ReleaseNotifier;
  private readonly cluster: boolean;
  private readonly send: CommandSender;
  private readonly publish: PublishCommand;
  private readonly replicaWait?: ReplicaWait;
  /** Owners, holders and waiters of a key; `list` and `forceRelease` (see lock-inspection.ts). */
  readonly inspector: RedisLockInspector;

  constructor(
    readonly client: Redis | Cluster,
    private readonly options: RedisLockStoreOptions = {},
  ) {
    this.cluster = client instanceof Cluster;
    this.connection = new ConnectionState(client);
    this.send = this.cluster ? directSender(client) : corkingSender(client as Redis);
    this.publish = this.cluster ? 'SPUBLISH' : 'PUBLISH';
    if (this.cluster && options.replicas) {
      throw new LockOptionsError(
        '"replicas" (WAIT) is not available on Redis Cluster; use it with a single master or Sentinel.',
      );
    }
    if (options.replicas) this.replicaWait = new ReplicaWait(client as Redis, options.replicas);
    this.grantsOnlyOnAcquire = this.replicaWait !== undefined;
    this.notifier = notifierFor(client);
    this.inspector = new RedisLockInspector(client, this.send, this.publish, this.notifier);
  }

  checkKeys(keys: readonly string[]): void {
    if (this.cluster) checkClusterKeys(keys);
  }

  async init(): Promise<void> {
    if (!this.replicaWait) return;
    // WAIT's check needs the server: an unreachable one is reported as such, not as a refusal.
    await this.ping();
    await this.replicaWait.check();
  }

  tryAcquire(request: AcquireRequest): Promise<AcquireAttempt> {
    if (this.writable) return this.attempt(request);
    // A user's client without an offline queue fails every command until it is ready.
    if (this.connection.connecting) {
      return this.connection.whenConnected().then(() => this.acquireNow(request));
    }
    return this.acquireNow(request);
  }

  /**
   * Ready, not failed since, and its socket still writable: most calls find it so, and read it
   * here, ahead of the connection's fuller account (see `ConnectionState.down`), which keeps
   * connection-state.ts off the uncontended path (decision 0012).
   */
  private get writable(): boolean {
    const { client } = this;
    return client.status === 'ready' && !this.connection.failure && !socketClosed(client);
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
    if (kind && kind.type !== 'mutex') return acquireHolder(this.send, request, kind);
    // The common case, as plain `SET NX PX`: no script to run.
    if (keys.length === 1 && queue === undefined && !fencing) {
      return this.acquireBySet(keys[0], token, ttl);
    }
    return acquireMutex(this.send, request);
  }

  /** Not async, and the holder's lease is read only when busy: this is every uncontended lock. */
  private acquireBySet(key: string, token: string, ttl: number): Promise<AcquireAttempt> {
    // Read as parsed; a busy key's PTTL is asked after the parse, not from ioredis's reply loop.
    return this.send('set', [key, token, 'PX', ttl, 'NX'], (reply) =>
      reply === 'OK'
        ? ACQUIRED
        : Promise.resolve(key).then((busy) => this.busyAttempt(busy, token)),
    ) as Promise<AcquireAttempt>;
  }

  private async busyAttempt(key: string, token: string): Promise<AcquireAttempt> {
    const pttl = (await runScript(this.send, LOOK_AT_HOLDER, [key], [token])) as number | [string];
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
    if (kind && kind.type !== 'mutex') {
      const args = [memberLetter[kind.type] + token, quiet ? '1' : '0'];
      const script = RELEASE_HOLDER[this.publish];
      return runScript(this.send, script, [keys[0], turnsKeyOf(keys[0])], args, read);
    }
    if (quiet) return runScript(this.send, GIVE_BACK, keys, [token], read);
    const single = keys.length === 1;
    if (single && !requeue && !successor) {
      // Nobody waits here; a marked key (others wait elsewhere) answers 3, and is handed on:
      // read as parsed, so the second call is sent after the parse, not from ioredis's reply loop.
      const handOn = (reply: unknown): ReleaseReport | Promise<ReleaseReport> =>
        reply === 3 ? Promise.resolve().then(() => this.handOn(keys, token, [])) : read(reply);
      return runScript(
        this.send,
        RELEASE_UNWATCHED,
        keys,
        [token],
        handOn,
      ) as Promise<ReleaseReport>;
    }
    // The optional arguments are sent only when someone waits here.
    const args = single ? [requeue, successor?.token ?? '', successor?.ttl ?? 0] : [];
    return this.handOn(keys, token, args);
  }

  /** RELEASE, which gives each key to the next process in its turn list, if any. */
  private handOn(keys: readonly string[], token: string, args: RedisArg[]): Promise<ReleaseReport> {
    const scriptKeys = [...keys, ...keys.map(turnsKeyOf)];
    const script = RELEASE[this.publish];
    return runScript(this.send, script, scriptKeys, [token, ...args], this.reportOf(keys));
  }

  /** Reads a release's reply; the notifications it sent are counted against our own listeners. */
  private reportOf(keys: readonly string[]): (reply: unknown) => ReleaseReport {
    const listenersHere = (): number =>
      keys.filter((key) => this.notifier.isSubscribed(channelOf(key))).length;
    return (reply) =>
      releaseReport(reply as number, (subscribers) => subscribers > listenersHere());
  }

  private leaveLists(key: string, queue: string): void {
    const keys = [key, turnsKeyOf(key), writerKeyOf(key)];
    runScript(this.send, LEAVE[this.publish], keys, [queue]).catch(() => undefined);
  }

  async extend(leases: readonly LeaseExtension[]): Promise<ExtendResult[]> {
    if (this.connection.down) return this.connection.refuse();
    return extendLeases(this.send, this.cluster, leases);
  }

  subscribe(key: string, onRelease: ReleaseListener): Promise<() => void> {
    return this.notifier.subscribe(channelOf(key), onRelease);
  }

  get endpoint(): string {
    return endpointOf(this.client);
  }

  /** Fails as soon as the connection is found down, rather than wait to reconnect. */
  async ping(): Promise<void> {
    await this.connection.whenConnected();
    await this.connection.untilDown(() => this.client.ping());
  }

  readonly health = (timeout: number): Promise<StoreHealth> =>
    redisHealth(this.client, timeout, this.connection.failure);

  readonly evictionPolicy = (): Promise<string | undefined> => evictionPolicyOf(this.client);

  /** Closes the subscriber and, if the module made it, the client: together, each bounded. */
  async close(): Promise<void> {
    this.connection.dispose();
    const client = this.options.ownsClient ? closeConnection(this.client) : undefined;
    await Promise.all([this.notifier.close(), client]);
  }
}
