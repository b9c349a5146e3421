import type * as ioredis from 'ioredis';
import type { Cluster, Redis } from 'ioredis';
import type { CommandSender, RedisArg, ReplyReader } from '../redis-client.port.js';

/**
 * Every use the library makes of ioredis beyond its documented API is in this file, which only
 * the ioredis adapter (ioredis.adapter.ts) reaches; it also holds the adapter's command path,
 * the code every lock runs. Each use is checked once per client (`internalsOf`) and has a plain
 * fallback through documented calls, so an ioredis whose insides change makes the store a
 * little slower, not wrong. `plainIoredis` forces the fallbacks, for the tests and the bench
 * (BENCH_PLAIN_IOREDIS in bench/README.md); each trick stays only while the bench shows it
 * worth 5% (bench/RESULTS.md).
 * - `readInParse`: the store's own `Command` (exported by ioredis but left out of its docs),
 *   whose `transformReply` reads the reply as ioredis parses it, sent with `sendCommand`.
 *   Plain: `client.call`, and a `.then` to read the reply (one promise job more).
 * - `flatArgs`: arguments in an array whose `flat()` is itself, since the `Command` constructor
 *   copies its arguments with `args.flat()`, slow even for five strings. Plain: an `Array`.
 * - `cork`: `commandQueue.length` (commands written, not yet answered) and `stream.cork()`,
 *   to send commands behind a backlog in one write. Plain: each command in its own write.
 * - `failUnanswered`: `commandQueue.toArray()`, to fail the commands a closed connection left
 *   unanswered. Plain: their callers hear of it at their `storeTimeout`.
 * - `socket`: `stream.writable`, to see a close before ioredis reports it. Plain: its events.
 * ioredis itself is loaded here only when a store is given an ioredis client (`loadIoredis`):
 * an app without ioredis never loads it.
 */
export const IOREDIS_TRICKS = [
  'readInParse',
  'flatArgs',
  'cork',
  'failUnanswered',
  'socket',
] as const;
export type IoredisTrick = (typeof IOREDIS_TRICKS)[number];

/** Which uses work with a client, as checked for it. */
export type IoredisInternals = Readonly<Record<IoredisTrick, boolean>>;

export type IoredisClient = Redis | Cluster;
type CommandClass = typeof ioredis.Command;
type CommandOptions = ConstructorParameters<CommandClass>[2];
type Transformed = ReturnType<InstanceType<CommandClass>['transformReply']>;
export type ReadCommandClass = new (
  name: string,
  args: RedisArg[],
  options: CommandOptions,
  read?: ReplyReader,
) => InstanceType<CommandClass>;

/** `info` called as ioredis's ready check calls it: a callback alone (owned-client.ts). */
export const isReadyCheck = (a: unknown[]) => a.length === 1 && typeof a[0] === 'function';

/** The socket side of a connection, as the uses need it. */
export interface ClientSocket {
  readonly writable: boolean;
  cork(): void;
  uncork(): void;
}

/** An unanswered command, as `failUnanswered` fails it. */
interface Rejectable {
  reject(error: Error): void;
}

/** A `Command` whose reply `read` turns into its value in the step ioredis parses it. */
export let ReadCommand: ReadCommandClass | undefined;
let loading: Promise<void> | undefined;

/** Loads ioredis's `Command` (once): before that, every client runs on the plain paths. */
export function loadIoredis(): Promise<void> {
  loading ??= import('ioredis').then(adoptIoredis, () => undefined);
  return loading;
}

/** Takes `Command` from an ioredis module the caller loaded (the module's own client builder). */
export function adoptIoredis(module: Partial<typeof ioredis>): void {
  const Command = module.Command;
  if (ReadCommand || typeof Command !== 'function') return;
  ReadCommand = class extends Command {
    constructor(
      name: string,
      args: RedisArg[],
      options: CommandOptions,
      private readonly read?: ReplyReader,
    ) {
      super(name, args, options);
    }

    override transformReply(result: Buffer | Buffer[]): Transformed {
      const reply = super.transformReply(result);
      return (this.read ? this.read(reply) : reply) as Transformed;
    }
  };
  loading ??= Promise.resolve();
}

/** Arguments whose `flat()` is the array itself (see `flatArgs`). */
class CommandArgs extends Array<RedisArg> {
  override flat<A, D extends number = 1>(this: A): FlatArray<A, D>[] {
    return this as unknown as FlatArray<A, D>[];
  }
}

/**
 * A copy of `args` for one command: ioredis turns numbers into strings and prefixes keys in the
 * array it keeps, and a caller may send the same arguments again (a script's NOSCRIPT retry).
 */
export function commandArgs(args: readonly RedisArg[], flatArgs: boolean): RedisArg[] {
  const copy = flatArgs ? new CommandArgs(args.length) : new Array<RedisArg>(args.length);
  for (let i = 0; i < args.length; i++) copy[i] = args[i];
  return copy;
}

/** When to hold commands back (`cork`), and how many per write. */
export interface CorkRule {
  /** Commands awaiting replies before a new one is held back. */
  readonly backlog: number;
  /** Most commands held back for one write, given the backlog found. */
  readonly batch: (backlog: number) => number;
}

/**
 * Sends one command, each in its own socket write unless corked, with the client's key prefix
 * and its reply as a string, read by `read` when given. With `cork`, while `rule.backlog` or
 * more commands on this connection await their replies, the socket holds the bytes until a
 * batch is waiting or the promise callbacks of this tick have run, so that they leave in one
 * write system call; order on the connection is unchanged.
 */
export function ioredisSender(
  client: IoredisClient,
  { readInParse, flatArgs, cork }: IoredisInternals,
  rule: CorkRule,
): CommandSender {
  const { keyPrefix, showFriendlyErrorStack } = client.options as {
    keyPrefix?: string;
    showFriendlyErrorStack?: boolean;
  };
  const Command = ReadCommand;
  const options = { replyEncoding: 'utf8', keyPrefix } as const;
  // Friendly error stacks need a stack per command, which the client's own `call` takes.
  const send: CommandSender =
    !readInParse || !Command || showFriendlyErrorStack
      ? (command, args, read) => {
          const reply = client.call(command, ...args);
          return read ? reply.then(read) : reply;
        }
      : (command, args, read) =>
          client.sendCommand(
            new Command(command, commandArgs(args, flatArgs), options, read),
          ) as Promise<unknown>;
  if (!cork) return send;
  const redis = client as Redis;
  /** The socket now corked (captured: a reconnect mid-tick brings a new one), if any. */
  let corked: ClientSocket | undefined;
  let batched = 0;
  let batch = 0;
  let tickEndPending = false;
  const uncork = (): void => {
    corked?.uncork();
    corked = undefined;
  };
  const endOfTick = (): void => {
    tickEndPending = false;
    uncork();
  };
  return (command, args, read) => {
    if (corked && ++batched > batch) uncork();
    if (!corked) {
      const backlog = backlogOf(redis);
      if (backlog >= rule.backlog && redis.status === 'ready') corked = socketOf(redis);
      if (corked) {
        corked.cork();
        batched = 1;
        batch = rule.batch(backlog);
        if (!tickEndPending) {
          tickEndPending = true;
          process.nextTick(endOfTick);
        }
      }
    }
    return send(command, args, read);
  };
}

/**
 * Whether the client is ready, and, with `socket`, its socket still writable: a socket whose
 * peer died stops being writable a turn of the loop before ioredis hears of the close.
 */
export function writableCheck(client: IoredisClient, socket: boolean): () => boolean {
  if (!socket) return () => client.status === 'ready';
  const redis = client as Redis;
  return () => redis.status === 'ready' && socketOf(redis)?.writable !== false;
}

/** Commands written and not yet answered, when `cork` works with the client. */
export function backlogOf(client: Redis): number {
  return (client as unknown as { commandQueue: { length: number } }).commandQueue.length;
}

/** The client's socket, when `cork` works with the client and it has one. */
export function socketOf(client: Redis): ClientSocket | undefined {
  const stream = (client as { stream?: Partial<ClientSocket> }).stream;
  return typeof stream?.cork === 'function' ? (stream as ClientSocket) : undefined;
}

/** The commands written on the connection and not answered, when `failUnanswered` works. */
export function unansweredOf(client: Redis): Rejectable[] {
  const queue = (client as unknown as { commandQueue: { toArray(): unknown[] } }).commandQueue;
  const unanswered: Rejectable[] = [];
  for (const item of queue.toArray()) {
    const command = (item as { command?: Partial<Rejectable> } | undefined)?.command;
    if (typeof command?.reject === 'function') unanswered.push(command as Rejectable);
  }
  return unanswered;
}
