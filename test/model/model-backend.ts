/**
 * Where a target's locks live: a real redis-server (each service reaching it through its own
 * delay proxy, so its replies can be held back) or the memory store. The backend also owns
 * the store-wide faults and outside moves, and the look at every key after each step.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type Cluster } from 'ioredis';
import { MemoryLockStore } from '../../lib/stores/memory/memory-lock.store.js';
import type { LockStore } from '../../lib/stores/lock-store.interface.js';
import { forgetPid, watchPid } from '../harness/process-watchdog.js';
import { DROPPED_AT_ONCE, RedisServer } from '../harness/redis-server.js';
import { TcpDelayProxy } from '../harness/tcp-delay-proxy.js';
import { newAclUser, servicesRule, userArgs, type AclUser } from './acl-user.js';

/** How a service reaches the store: a port for a child to connect to, or a store to share. */
export type StoreLink =
  | { readonly type: 'redis'; readonly port: number; readonly user?: AclUser }
  | {
      readonly type: 'cluster';
      readonly ports: readonly number[];
      readonly natMap: Record<string, { host: string; port: number }>;
      readonly user?: AclUser;
    }
  | { readonly type: 'memory'; readonly store: LockStore };

/**
 * What a backend can do to its store: faults between the library and Redis (`drop`,
 * `restart`, `delay`), and moves of others (`remove`: DEL/UNLINK; `flushall`; `acl`: revoke a
 * grant; `foreign`: clients of their own on the keys; `cli`: the admin CLI).
 */
export type Capability =
  'drop' | 'restart' | 'delay' | 'remove' | 'flushall' | 'acl' | 'foreign' | 'cli';

export interface Backend {
  readonly name: string;
  readonly can: readonly Capability[];
  /** The test's own connection (undefined for the memory store: nothing to look at). */
  readonly probe: Redis | Cluster | undefined;
  beginRun(services: number): Promise<void>;
  link(svc: number): StoreLink;
  /** A probe a child process opens for its own audits (direct, never through a proxy). */
  probePorts(): readonly number[];
  /** A new direct connection as the default user, for a foreign client; the caller closes it. */
  client(): Redis | Cluster;
  setDelay(svc: number, ms: number): void;
  drop(): Promise<void>;
  restart(persist: boolean): Promise<void>;
  /** DEL or UNLINK of one key, by its full name; whether there was one to remove. */
  removeKey(fullKey: string, how: 'DEL' | 'UNLINK'): Promise<boolean>;
  flushAll(): Promise<void>;
  /** Revokes (false) or grants back (true) one command of the services' user, on every node. */
  setGrant(command: string, granted: boolean): Promise<void>;
  /** The admin CLI's options to reach this store. */
  cliArgs(): string[];
  /** Keys that would live for ever (PTTL −1): every key, whatever its name. */
  keysWithoutExpiry(): Promise<string[]>;
  endRun(): Promise<void>;
  stop(): Promise<void>;
}

/** SCAN every key on one node and keep those without an expiry. */
export async function foreverKeys(node: Redis): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await node.scan(cursor, 'COUNT', 1000);
    cursor = next;
    const ttls = await Promise.all(batch.map((key) => node.pttl(key)));
    batch.forEach((key, i) => ttls[i] === -1 && found.push(key));
  } while (cursor !== '0');
  return found;
}

/** The RDB file a restart with persistence saves and loads again. */
const RDB_FILE = 'model.rdb';

export class RedisBackend implements Backend {
  readonly name = 'redis';
  readonly can = ['drop', 'restart', 'delay', 'remove', 'flushall', 'acl', 'foreign', 'cli'] as const; // prettier-ignore
  private proxies: TcpDelayProxy[] = [];

  private constructor(
    private readonly server: RedisServer,
    readonly probe: Redis,
    private readonly user: AclUser,
    /** The server's own directory: where a restart with persistence finds its RDB file. */
    private readonly dir: string,
  ) {}

  static async start(): Promise<RedisBackend> {
    const user = newAclUser();
    const dir = mkdtempSync(join(tmpdir(), 'model-redis-'));
    // Later arguments win: this --dir replaces the launcher's, which is new at every start.
    const args = ['--dir', dir, '--dbfilename', RDB_FILE, ...userArgs(user, servicesRule(false))];
    const server = await RedisServer.start(args);
    // The watchdog kills it if this runner dies before stop().
    watchPid(server.pid!);
    return new RedisBackend(server, server.client(), user, dir);
  }

  async beginRun(services: number): Promise<void> {
    this.proxies = await Promise.all(
      Array.from({ length: services }, () => TcpDelayProxy.start(this.server.port)),
    );
  }

  link(svc: number): StoreLink {
    return { type: 'redis', port: this.proxies[svc]!.port, user: this.user };
  }

  probePorts(): readonly number[] {
    return [this.server.port];
  }

  client(): Redis {
    const client = new Redis({ host: '127.0.0.1', port: this.server.port, maxRetriesPerRequest: 1, ...DROPPED_AT_ONCE }); // prettier-ignore
    client.on('error', () => undefined);
    return client;
  }

  setDelay(svc: number, ms: number): void {
    this.proxies[svc]?.setDelay(ms, 'toClient');
  }

  async drop(): Promise<void> {
    // SKIPME: the probe's own connection stays; the proxies pass each cut on to their client.
    await this.probe
      .call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes')
      .catch(() => undefined);
    await this.probe.call('CLIENT', 'KILL', 'TYPE', 'pubsub').catch(() => undefined);
  }

  /**
   * SIGKILL and start again. Without persistence every key is gone; with it, the server loads
   * what a SAVE just before the kill wrote (leases granted or released since are not in it).
   */
  async restart(persist: boolean): Promise<void> {
    const before = this.server.pid!;
    if (persist) await this.probe.save();
    else rmSync(join(this.dir, RDB_FILE), { force: true });
    await this.server.restart(false);
    forgetPid(before);
    watchPid(this.server.pid!);
  }

  async removeKey(fullKey: string, how: 'DEL' | 'UNLINK'): Promise<boolean> {
    return (await this.probe.call(how, fullKey)) === 1;
  }

  async flushAll(): Promise<void> {
    await this.probe.flushall();
  }

  async setGrant(command: string, granted: boolean): Promise<void> {
    await this.probe.call('ACL', 'SETUSER', this.user.name, `${granted ? '+' : '-'}${command}`);
  }

  cliArgs(): string[] {
    return ['--redis', this.server.url];
  }

  keysWithoutExpiry(): Promise<string[]> {
    return foreverKeys(this.probe);
  }

  async endRun(): Promise<void> {
    await Promise.all(this.proxies.map((proxy) => proxy.close()));
    this.proxies = [];
    await this.probe.flushall().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.probe.disconnect();
    const pid = this.server.pid!;
    await this.server.stop();
    forgetPid(pid);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The reference store, shared by every service of a run as one Redis would be. */
export class MemoryBackend implements Backend {
  readonly name = 'memory';
  readonly can = ['remove'] as const;
  readonly probe = undefined;
  private store = new MemoryLockStore();

  async beginRun(): Promise<void> {
    this.store = new MemoryLockStore();
  }

  link(): StoreLink {
    return { type: 'memory', store: this.store };
  }

  probePorts(): readonly number[] {
    return [];
  }

  client(): never {
    throw new Error('the memory store has no clients of its own');
  }

  setDelay(): void {}
  async drop(): Promise<void> {}
  async restart(): Promise<void> {}

  /**
   * The memory store's own outside delete: a mutex key goes, nobody is told (as a DEL). It
   * reaches mutex keys only: a holder set is left as it is, and said so.
   */
  async removeKey(fullKey: string): Promise<boolean> {
    const found = await this.store.inspector.inspect(fullKey, { prefix: '', holders: 1 });
    if (found?.kind !== 'mutex') return false;
    this.store.forceDelete(fullKey);
    return true;
  }

  async flushAll(): Promise<void> {}
  async setGrant(): Promise<void> {}

  cliArgs(): string[] {
    return [];
  }

  async keysWithoutExpiry(): Promise<string[]> {
    return [];
  }

  async endRun(): Promise<void> {
    await this.store.close();
  }

  async stop(): Promise<void> {}
}
