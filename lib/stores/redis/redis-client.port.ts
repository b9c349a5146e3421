import type { LuaScript } from './scripts/lua-script.js';

/*
 * The port between the Redis store and a Redis client library: the few operations the store
 * needs, each written once per client by an adapter (ioredis.adapter.ts, node-redis.adapter.ts,
 * glide.adapter.ts). The store's logic, its scripts and the reading of error replies
 * (store-refusals.ts) stay one copy above it. Types only: importing it loads no client.
 *
 * Replies reach the store as Redis sent them, decoded as UTF-8 text: bulk strings as strings,
 * integers as numbers, nil as null, arrays as arrays. An error reply rejects with an `Error`
 * whose `name` is 'ReplyError' and whose `message` is the reply's text as Redis wrote it
 * (`NOPERM this user…`): each adapter turns its client's error into that shape.
 */

export type RedisArg = string | number;
/** Turns a command's reply into its caller's value. */
export type ReplyReader = (reply: unknown) => unknown;
/** Sends one command and resolves its reply, read by `read` when given. */
export type CommandSender = (
  command: string,
  args: readonly RedisArg[],
  read?: ReplyReader,
) => Promise<unknown>;
/**
 * Runs a script by its SHA (EVALSHA), and sends its body (EVAL) when the server does not have
 * it (NOSCRIPT: first use, a restart, a SCRIPT FLUSH), which also loads it for the next call.
 */
export type ScriptRunner = <T = unknown>(
  script: LuaScript,
  keys: readonly string[],
  args: readonly RedisArg[],
  read?: (reply: unknown) => T,
) => Promise<T>;

/** The client libraries the store speaks through. */
export type RedisClientKind = 'ioredis' | 'node-redis' | 'glide';

/**
 * Where a connection stands: `ready`; `idle`, not connected yet and waiting to be told to
 * (a lazy client); `connecting`; or `closed`, known down until it is ready again.
 */
export type ConnectionStatus = 'ready' | 'idle' | 'connecting' | 'closed';

/** What the store hears of a connection. */
export interface ConnectionEvents {
  readonly ready: () => void;
  /** The connection failed or closed; `error` says why, when the client told. */
  readonly down: (error?: Error) => void;
}

/** The release subscriber's connection: SUBSCRIBE, or SSUBSCRIBE on a Cluster. */
export interface SubscriberConnection {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  close(): Promise<void>;
}

/** What a subscriber connection tells its owner. */
export interface SubscriberEvents {
  readonly message: (channel: string, message: string) => void;
  /**
   * Messages may have been missed: the connection came back, or a Cluster's shards moved. The
   * owner wakes every waiter to look again.
   */
  readonly missed: () => void;
}

/** One client, as the Redis store uses it. */
export interface RedisClientPort {
  readonly kind: RedisClientKind;
  /** A Redis Cluster: sharded pub/sub, keys checked for their slots, SCAN on every master. */
  readonly cluster: boolean;
  /** The application's client (or the one the module made), as `LOCK_REDIS_CLIENT` injects it. */
  readonly client: object | undefined;
  readonly send: CommandSender;
  readonly script: ScriptRunner;
  /** Ready and able to write at once: read before every attempt, so it costs next to nothing. */
  readonly writable: () => boolean;
  readonly status: () => ConnectionStatus;
  /** Follows the connection until the returned function is called. */
  watch(events: ConnectionEvents): () => void;
  /** Tells an idle client to connect. */
  connect(): void;
  /** Resolves once the adapter has all it needs (a client it builds, a module it loads). */
  ready(): Promise<void>;
  /** The locks' keys matching `match`, a SCAN page at a time, on every master of a Cluster. */
  scan(match: string, count: number): AsyncIterable<readonly string[]>;
  /** A connection of the store's own for release notifications, made from this client's settings. */
  subscriber(events: SubscriberEvents): SubscriberConnection;
  /** Where the client connects, for logs: never credentials. */
  endpoint(): string;
  /** Closes the client: politely when it is up, at once when it is not. For clients the module made. */
  close(): Promise<void>;
}
