import { Command, type Cluster, type Redis } from 'ioredis';

export type RedisArg = string | number;
/** Turns a command's reply into its caller's value, as the reply is parsed. */
export type ReplyReader = (reply: unknown) => unknown;
/** Sends one command and resolves its reply, read by `read` when given. */
export type CommandSender = (
  command: string,
  args: readonly RedisArg[],
  read?: ReplyReader,
) => Promise<unknown>;

/**
 * Commands awaiting replies on the connection before a new one is held back (`cork`) to share
 * a socket write. A write that finds Redis asleep wakes it, and that wake-up can be most of a
 * write's cost; with this many commands ahead of it, Redis is still busy when the held-back
 * bytes leave, so holding them costs it no idle time. With fewer, Redis would run dry while
 * Node holds them, and Node would then wait on Redis. The rule was chosen by measurement (see
 * "Design decisions these figures rest on" in bench/RESULTS.md).
 */
export const CORK_BACKLOG = 3;

/**
 * Most commands held back for one write: a quarter of the backlog, so that Redis gets the next
 * batch before it has worked through the last (at least `CORK_BACKLOG`). Deep backlogs (64
 * workers) thus leave in big writes, and shallow ones in small writes that keep both busy.
 */
export function corkBatch(backlog: number): number {
  return Math.max(CORK_BACKLOG, backlog >> 2);
}

/** When to hold commands back, and how many per write. */
export interface CorkRule {
  /** Commands awaiting replies before a new one is held back. */
  readonly backlog: number;
  /** Most commands held back for one write, given the backlog found. */
  readonly batch: (backlog: number) => number;
}

const LIBRARY_CORK_RULE: CorkRule = { backlog: CORK_BACKLOG, batch: corkBatch };

/**
 * A command's arguments as the senders hand them to ioredis. ioredis copies every command's
 * arguments with `args.flat()` (callers once passed nested arrays), and V8's
 * `Array.prototype.flat` is slow even for five strings: most of the cost of building a command
 * (see "Design decisions these figures rest on" in bench/RESULTS.md). Ours are flat already,
 * so `flat()` is the array itself.
 */
class CommandArgs extends Array<RedisArg> {
  override flat<A, D extends number = 1>(this: A): FlatArray<A, D>[] {
    return this as unknown as FlatArray<A, D>[];
  }
}

/**
 * A copy of `args` for one command: ioredis turns numbers into strings and prefixes keys in
 * the array it is given, and a caller may send the same arguments again (a script's NOSCRIPT
 * fallback).
 */
function commandArgs(args: readonly RedisArg[]): CommandArgs {
  const copy = new CommandArgs(args.length);
  for (let i = 0; i < args.length; i++) copy[i] = args[i];
  return copy;
}

/**
 * A command whose reply is read in the step ioredis parses it (`transformReply` is public
 * ioredis API): a `.then` to read it would cost every lock one more promise job.
 */
class ReadCommand extends Command {
  constructor(
    name: string,
    args: readonly RedisArg[],
    options: ConstructorParameters<typeof Command>[2],
    private readonly read: ReplyReader,
  ) {
    super(name, args as RedisArg[], options);
  }

  override transformReply(result: Buffer | Buffer[]): ReturnType<Command['transformReply']> {
    return this.read(super.transformReply(result)) as ReturnType<Command['transformReply']>;
  }
}

/**
 * Sends each command in its own socket write, as the client's own methods do (same key prefix,
 * same reply encoding), with its reply read on arrival. The client's friendly error stacks need
 * a stack per command, which its own `call` takes care of.
 */
export function directSender(client: Redis | Cluster): CommandSender {
  const { keyPrefix, showFriendlyErrorStack } = client.options as {
    keyPrefix?: string;
    showFriendlyErrorStack?: boolean;
  };
  const options = { replyEncoding: 'utf8', keyPrefix } as const;
  return (command, args, read) => {
    if (showFriendlyErrorStack) {
      const reply = client.call(command, ...args);
      return read ? reply.then(read) : reply;
    }
    const sent = read
      ? new ReadCommand(command, commandArgs(args), options, read)
      : new Command(command, commandArgs(args), options);
    return client.sendCommand(sent) as Promise<unknown>;
  };
}

/**
 * Sends a command at once while Redis has little else to do; but while `CORK_BACKLOG` or more
 * commands on this connection await their replies (many locks at once), the socket holds the
 * bytes (`cork`) until a batch (`corkBatch`) is waiting or the promise callbacks of this tick
 * have run, so they leave in one write system call instead of one each. Order on the
 * connection is unchanged. ioredis's `commandQueue` holds the commands written and not yet
 * answered: reading it costs nothing per command.
 */
export function corkingSender(client: Redis, rule: CorkRule = LIBRARY_CORK_RULE): CommandSender {
  const send = directSender(client);
  /** The socket now corked (captured: a reconnect mid-tick brings a new one), if any. */
  let corked: Redis['stream'] | undefined;
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
      const backlog = client.commandQueue.length;
      if (backlog >= rule.backlog && client.status === 'ready') {
        corked = client.stream;
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
