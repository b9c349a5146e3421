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
 * Most commands of one tick that share a socket write. Fewer writes save system calls in
 * Node; but a write that waits for the whole tick leaves Redis idle until Node has answered
 * every reply of the last batch, and Node idle while Redis works through the new one. Small
 * batches keep both busy. In bench scenario 1, 4–6 did best at 8 workers and 6–8 at 64.
 */
export const CORK_BATCH = 5;

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
      ? new ReadCommand(command, args, options, read)
      : new Command(command, args as RedisArg[], options);
    return client.sendCommand(sent) as Promise<unknown>;
  };
}

/**
 * Sends a lone command at once; but while other commands on this connection await their
 * replies (many locks at once), the socket holds the bytes (`cork`) until `batch` commands are
 * waiting or the promise callbacks of this tick have run, so they leave in one write system
 * call instead of one each. Order on the connection is unchanged. ioredis's `commandQueue`
 * holds the commands written and not yet answered: reading it costs nothing per command.
 */
export function corkingSender(client: Redis, batch = CORK_BATCH): CommandSender {
  const send = directSender(client);
  /** The socket now corked (captured: a reconnect mid-tick brings a new one), if any. */
  let corked: Redis['stream'] | undefined;
  let batched = 0;
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
    if (!corked && client.commandQueue.length > 0 && client.status === 'ready') {
      corked = client.stream;
      corked.cork();
      batched = 1;
      if (!tickEndPending) {
        tickEndPending = true;
        process.nextTick(endOfTick);
      }
    }
    return send(command, args, read);
  };
}
