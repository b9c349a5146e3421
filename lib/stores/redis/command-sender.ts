import type { Cluster, Redis } from 'ioredis';

export type RedisArg = string | number;
/** Sends one command and resolves its reply. */
export type CommandSender = (command: string, args: readonly RedisArg[]) => Promise<unknown>;

/**
 * Most commands of one tick that share a socket write. Fewer writes save system calls in
 * Node; but a write that waits for the whole tick leaves Redis idle until Node has answered
 * every reply of the last batch, and Node idle while Redis works through the new one. Small
 * batches keep both busy. In bench scenario 1, 4–6 did best at 8 workers and 6–8 at 64.
 */
export const CORK_BATCH = 5;

/** Sends each command in its own socket write. */
export function directSender(client: Redis | Cluster): CommandSender {
  return (command, args) => client.call(command, ...args);
}

/**
 * Sends a lone command at once; but while other commands on this connection await their
 * replies (many locks at once), the socket holds the bytes (`cork`) until `batch` commands are
 * waiting or the promise callbacks of this tick have run, so they leave in one write system
 * call instead of one each. Order on the connection is unchanged. ioredis's `commandQueue`
 * holds the commands written and not yet answered: reading it costs nothing per command.
 */
export function corkingSender(client: Redis, batch = CORK_BATCH): CommandSender {
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
  return (command, args) => {
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
    return client.call(command, ...args);
  };
}
