import type { ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { internalsOf, isReadyCheck, unansweredOf } from './ioredis-internals.js';

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

/** ioredis's own `connectTimeout` default, kept when `storeTimeout` leaves more room. */
const IOREDIS_CONNECT_TIMEOUT = 10_000;

/**
 * A TLS connection's `connectTimeout`, within the first call's `storeTimeout`. A handshake that
 * cannot complete (a `rediss://` URL pointed at a port without TLS) hangs until it: then the
 * connection is known down, with its reason, before the startup check's deadline, and later
 * calls fail at once instead of each waiting out `storeTimeout`.
 */
export function tlsConnectTimeout(options: RedisOptions, storeTimeout: number): RedisOptions {
  if (!options.tls) return {};
  return { connectTimeout: Math.min(IOREDIS_CONNECT_TIMEOUT, Math.ceil(storeTimeout / 2)) };
}

/**
 * Sends ioredis's warning that its ready check was skipped (INFO refused to an ACL user) to
 * `warn` rather than to `console.warn`, for `client` (the store's subscriber, duplicated from
 * it, runs no ready check). The refusal is answered as ioredis does itself: as an empty INFO.
 * Plain (an ioredis whose ready check calls `info` otherwise): the warning goes to the console
 * again.
 */
export function warnReadyCheckThrough(client: Redis, warn: (message: string) => void): void {
  const info = client.info.bind(client) as (...args: unknown[]) => Promise<unknown>;
  Object.assign(client, {
    info: (...args: unknown[]) =>
      isReadyCheck(args) ? readyCheckInfo(info, args[0] as InfoCallback, warn) : info(...args),
  });
}

type InfoCallback = (error: Error | null, reply?: unknown) => void;

function readyCheckInfo(
  info: () => Promise<unknown>,
  callback: InfoCallback,
  warn: (message: string) => void,
): Promise<unknown> {
  return info().then(
    (reply) => (callback(null, reply), reply),
    (error: Error) => {
      if (!String(error?.message).includes('NOPERM')) {
        // The ready check reads the callback only: a rejected promise here would be unhandled.
        callback(error);
        return undefined;
      }
      warn(
        `Redis refuses INFO to the lock store's connection (${error.message}), so ioredis skips ` +
          'its ready check: it will not wait for a server that is still loading its data, nor ' +
          "check a Sentinel master's role. Grant the lock user +info to keep the check.",
      );
      callback(null, '');
      return '';
    },
  );
}
