import type { ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { internalsOf, unansweredOf } from './ioredis-internals.js';

/**
 * ioredis options of the clients the module creates. A command resent after a reconnect may be
 * applied twice: a release that handed the key on, sent again, finds someone else's key. So
 * these clients never resend: a command whose reply a dropped connection lost fails instead
 * (see `failUnansweredOnClose`), and the engine gives back an acquire that may have landed.
 * Every script also recognises its caller's own earlier effect, for clients that do resend.
 */
export const OWNED_CLIENT_OPTIONS = {
  lazyConnect: true,
  autoResendUnfulfilledCommands: false,
  // Reconnect within half a second of Redis coming back, however long it was away.
  retryStrategy: (attempt: number) => Math.min(attempt * 50, 500),
} as const satisfies RedisOptions;

/** The same for a cluster's node connections. */
export function ownedClusterOptions(options: ClusterOptions = {}): ClusterOptions {
  return {
    lazyConnect: true,
    ...options,
    redisOptions: { autoResendUnfulfilledCommands: false, ...options.redisOptions },
  };
}

/**
 * A client that does not resend drops, on a reconnect, the commands the old connection left
 * unanswered, without ever settling them. This fails them as the connection closes, so their
 * callers hear of it now rather than at their timeout (which they still do without the
 * `failUnanswered` internals of ioredis-internals.ts).
 */
export function failUnansweredOnClose(client: Redis): void {
  if (!internalsOf(client).failUnanswered) return;
  client.on('close', () => {
    if (client.options.autoResendUnfulfilledCommands !== false) return;
    const lost = new Error(
      'Connection closed before the reply came; the command may have been applied.',
    );
    for (const command of unansweredOf(client)) command.reject(lost);
  });
}
