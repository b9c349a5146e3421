import type { Cluster, Redis } from 'ioredis';

export type RedisArg = string | number;
/** Sends one command and resolves its reply. */
export type CommandSender = (command: string, args: readonly RedisArg[]) => Promise<unknown>;

/** Sends each command in its own socket write. */
export function directSender(client: Redis | Cluster): CommandSender {
  return (command, args) => client.call(command, ...args);
}

/**
 * Sends each command at once; but while other commands of this store await their replies
 * (many locks at once), the socket holds the bytes until the promise callbacks of this tick have
 * run (`cork`), so the commands of this tick leave in one write system call instead of one
 * each. A lone command is written immediately. Order on the connection is unchanged.
 */
export function corkingSender(client: Redis): CommandSender {
  let corked = false;
  let awaiting = 0;
  const settled = (): void => void awaiting--;
  return (command, args) => {
    const socket = client.stream;
    if (awaiting > 0 && !corked && socket && client.status === 'ready') {
      corked = true;
      socket.cork();
      process.nextTick(() => {
        corked = false;
        socket.uncork();
      });
    }
    awaiting++;
    const reply = client.call(command, ...args);
    reply.then(settled, settled);
    return reply;
  };
}
