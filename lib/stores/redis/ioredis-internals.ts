import * as ioredis from 'ioredis';
import { Cluster, Redis } from 'ioredis';

/**
 * Every use the library makes of ioredis beyond its documented API is in this file. Each is
 * checked once per client (`internalsOf`) and has a plain fallback through documented calls, so
 * an ioredis whose insides change makes the store a little slower, not wrong. `plainIoredis`
 * forces the fallbacks, for the tests and the bench (BENCH_PLAIN_IOREDIS in bench/README.md);
 * each trick stays only while the bench shows it worth 5% (bench/RESULTS.md).
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

type Client = Redis | Cluster;
type CommandClass = typeof ioredis.Command;
type CommandOptions = ConstructorParameters<CommandClass>[2];
export type RedisArg = string | number;
/** Turns a command's reply into its caller's value. */
export type ReplyReader = (reply: unknown) => unknown;
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

/**
 * The property of a client that lists the uses to run plain on it. A registered symbol, so that
 * the bench, which sees only the package's entry points, can set it on its clients.
 */
export const PLAIN_IOREDIS = Symbol.for('nestjs-distributed-lock.plainIoredis');

const checked = new WeakMap<Client, IoredisInternals>();

/**
 * Makes the store built on `client` from now on use the plain fallback of `tricks` (all by
 * default): for tests and the bench, not the public API. Call it before building the store.
 */
export function plainIoredis(
  client: Client,
  tricks: readonly IoredisTrick[] = IOREDIS_TRICKS,
): void {
  (client as unknown as Record<symbol, unknown>)[PLAIN_IOREDIS] = [...tricks];
  checked.delete(client);
}

function plainOn(client: Client): ReadonlySet<unknown> {
  const tricks = (client as unknown as Record<symbol, unknown>)[PLAIN_IOREDIS];
  return new Set(Array.isArray(tricks) ? tricks : []);
}

/** The uses that work with `client`, checked on first asking and then remembered. */
export function internalsOf(client: Client): IoredisInternals {
  let internals = checked.get(client);
  if (!internals) {
    internals = Object.freeze(check(client, plainOn(client)));
    checked.set(client, internals);
  }
  return internals;
}

function check(client: Client, off: ReadonlySet<unknown>): IoredisInternals {
  const own = client instanceof Redis || client instanceof Cluster;
  const readInParse = !off.has('readInParse') && own && commandsReadInParse();
  return {
    readInParse,
    flatArgs: readInParse && !off.has('flatArgs') && commandTakesArgsAsGiven(),
    cork: !off.has('cork') && typeof queueMember(client, 'length') === 'number',
    failUnanswered:
      !off.has('failUnanswered') && typeof queueMember(client, 'toArray') === 'function',
    socket: !off.has('socket') && client instanceof Redis,
  };
}

/** A member of a client's queue of the commands written and not answered, if it has one. */
function queueMember(client: Client, name: string): unknown {
  const { commandQueue } = client as { commandQueue?: Record<string, unknown> | null };
  return client instanceof Redis ? commandQueue?.[name] : undefined;
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
function commandArgs(args: readonly RedisArg[], flatArgs: boolean): RedisArg[] {
  const copy = flatArgs ? new CommandArgs(args.length) : new Array<RedisArg>(args.length);
  for (let i = 0; i < args.length; i++) copy[i] = args[i];
  return copy;
}

type Transformed = ReturnType<InstanceType<CommandClass>['transformReply']>;
type ReadCommandClass = new (
  name: string,
  args: RedisArg[],
  options: CommandOptions,
  read?: ReplyReader,
) => InstanceType<CommandClass>;

/** ioredis's `Command`, if this ioredis exports one. */
const Command = (ioredis as Partial<typeof ioredis>).Command;

/** A `Command` whose reply `read` turns into its value in the step ioredis parses it. */
const ReadCommand: ReadCommandClass | undefined =
  typeof Command === 'function'
    ? class extends Command {
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
      }
    : undefined;

let readsInParse: boolean | undefined;
let takesArgsAsGiven: boolean | undefined;

/**
 * Whether a command built here prefixes its keys, settles its promise through `transformReply`
 * in the step it is resolved, decodes the reply as asked, and can be failed: tried once on a
 * command that is never sent.
 */
function commandsReadInParse(): boolean {
  readsInParse ??= attempt(() => {
    let read: unknown;
    const options = { replyEncoding: 'utf8', keyPrefix: 'p:' } as const;
    const probe = new ReadCommand!('get', ['k'], options, (reply) => (read = reply)) as unknown as {
      args: unknown[];
      promise?: unknown;
      resolve?: unknown;
      reject?: unknown;
    };
    if (typeof probe.resolve !== 'function' || typeof probe.reject !== 'function') return false;
    (probe.resolve as (reply: Buffer) => void)(Buffer.from('v'));
    const { then } = (probe.promise ?? {}) as { then?: unknown };
    return probe.args[0] === 'p:k' && read === 'v' && typeof then === 'function';
  });
  return readsInParse;
}

/** Whether the `Command` constructor keeps the arguments it is given when `flat()` says so. */
function commandTakesArgsAsGiven(): boolean {
  takesArgsAsGiven ??= attempt(() => {
    const args = commandArgs(['k', 1], true);
    return (new ReadCommand!('set', args, {}) as unknown as { args: unknown }).args === args;
  });
  return takesArgsAsGiven;
}

function attempt(probe: () => boolean): boolean {
  try {
    return ReadCommand !== undefined && probe();
  } catch {
    return false;
  }
}

/**
 * Sends one command, each in its own socket write unless corked, with the client's key prefix
 * and its reply as a string, read by `read` when given.
 */
export function commandSender(
  client: Client,
): (command: string, args: readonly RedisArg[], read?: ReplyReader) => Promise<unknown> {
  const { readInParse, flatArgs } = internalsOf(client);
  const { keyPrefix, showFriendlyErrorStack } = client.options as {
    keyPrefix?: string;
    showFriendlyErrorStack?: boolean;
  };
  // Friendly error stacks need a stack per command, which the client's own `call` takes.
  if (!readInParse || showFriendlyErrorStack) {
    return (command, args, read) => {
      const reply = client.call(command, ...args);
      return read ? reply.then(read) : reply;
    };
  }
  const options = { replyEncoding: 'utf8', keyPrefix } as const;
  return (command, args, read) =>
    client.sendCommand(
      new ReadCommand!(command, commandArgs(args, flatArgs), options, read),
    ) as Promise<unknown>;
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

/** The client's socket can no longer be written to, as far as `socket` can tell. */
export function socketClosed(client: Client): boolean {
  return internalsOf(client).socket && socketOf(client as Redis)?.writable === false;
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
