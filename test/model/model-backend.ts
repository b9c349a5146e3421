/**
 * Where a target's locks live: a real redis-server (each service reaching it through its own
 * delay proxy, so its replies can be held back) or the memory store. The backend also owns
 * the store-wide faults and the look at every key after each step.
 */
import { Redis, type Cluster } from 'ioredis';
import { MemoryLockStore } from '../../lib/stores/memory/memory-lock.store.js';
import type { LockStore } from '../../lib/stores/lock-store.interface.js';
import { forgetPid, watchPid } from '../harness/process-watchdog.js';
import { RedisServer } from '../harness/redis-server.js';
import { TcpDelayProxy } from '../harness/tcp-delay-proxy.js';

/** How a service reaches the store: a port for a child to connect to, or a store to share. */
export type StoreLink =
  | { readonly type: 'redis'; readonly port: number }
  | {
      readonly type: 'cluster';
      readonly ports: readonly number[];
      readonly natMap: Record<string, { host: string; port: number }>;
    }
  | { readonly type: 'memory'; readonly store: LockStore };

export interface Backend {
  readonly name: string;
  /** Store-wide faults this backend can inject. */
  readonly faults: readonly ('drop' | 'restart' | 'delay')[];
  /** The test's own connection (undefined for the memory store: nothing to look at). */
  readonly probe: Redis | Cluster | undefined;
  beginRun(services: number): Promise<void>;
  link(svc: number): StoreLink;
  /** A probe a child process opens for its own audits (direct, never through a proxy). */
  probePorts(): readonly number[];
  setDelay(svc: number, ms: number): void;
  drop(): Promise<void>;
  restart(): Promise<void>;
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

export class RedisBackend implements Backend {
  readonly name = 'redis';
  readonly faults = ['drop', 'restart', 'delay'] as const;
  private proxies: TcpDelayProxy[] = [];

  private constructor(
    private readonly server: RedisServer,
    readonly probe: Redis,
  ) {}

  static async start(): Promise<RedisBackend> {
    const server = await RedisServer.start();
    // The watchdog kills it if this runner dies before stop().
    watchPid(server.pid!);
    return new RedisBackend(server, server.client());
  }

  async beginRun(services: number): Promise<void> {
    this.proxies = await Promise.all(
      Array.from({ length: services }, () => TcpDelayProxy.start(this.server.port)),
    );
  }

  link(svc: number): StoreLink {
    return { type: 'redis', port: this.proxies[svc]!.port };
  }

  probePorts(): readonly number[] {
    return [this.server.port];
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

  async restart(): Promise<void> {
    const before = this.server.pid!;
    await this.server.restart();
    forgetPid(before);
    watchPid(this.server.pid!);
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
  }
}

/** The reference store, shared by every service of a run as one Redis would be. */
export class MemoryBackend implements Backend {
  readonly name = 'memory';
  readonly faults = [] as const;
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

  setDelay(): void {}
  async drop(): Promise<void> {}
  async restart(): Promise<void> {}

  async keysWithoutExpiry(): Promise<string[]> {
    return [];
  }

  async endRun(): Promise<void> {
    await this.store.close();
  }

  async stop(): Promise<void> {}
}
