import type { ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { internalsOf } from './ioredis-checks.js';
import { isReadyCheck, unansweredOf } from './ioredis-internals.js';

/**
 * How long ioredis gives a connection we drop to close its socket before destroying it
 * (`disconnectTimeout`, 2 s by default). Only the socket's close clears that timer, and the
 * socket of a connection whose server went away has closed already: at the default, an app shut
 * down while Redis is down would stay up 2 s longer. We drop a connection only once its QUIT
 * failed or its server is gone, so there is nothing to wait for.
 */
export const OWNED_DISCONNECT_TIMEOUT_MS = 100;

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
  disconnectTimeout: OWNED_DISCONNECT_TIMEOUT_MS,
} as const satisfies RedisOptions;

/** The same for a cluster's node connections. */
export function ownedClusterOptions(options: ClusterOptions = {}): ClusterOptions {
  return {
    lazyConnect: true,
    ...options,
    redisOptions: {
      autoResendUnfulfilledCommands: false,
      disconnectTimeout: OWNED_DISCONNECT_TIMEOUT_MS,
      ...options.redisOptions,
    },
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
 * Sends ioredis's console warnings about the module's own connections to `warn`, the module's
 * logger: a ready check skipped because INFO is refused to an ACL user, and a password the
 * server does not need. Each is answered as ioredis answers it itself (an empty INFO; an AUTH
 * that changes nothing), for `client` and the connections duplicated from it (the store's
 * subscriber runs no ready check, but authenticates). Plain (an ioredis that sends either
 * otherwise): the warning goes to the console again.
 */
export function warnThrough(client: Redis, warn: (message: string) => void): void {
  const info = client.info.bind(client) as Command;
  const auth = client.auth.bind(client) as Command;
  const duplicate = client.duplicate.bind(client);
  Object.assign(client, {
    info: (...args: unknown[]) =>
      isReadyCheck(args) ? answered(info, args, READY_CHECK_REFUSED, warn) : info(...args),
    auth: (...args: unknown[]) => answered(auth, args, PASSWORD_NOT_NEEDED, warn),
    duplicate: (...args: Parameters<Redis['duplicate']>) => {
      const copy = duplicate(...args);
      warnThrough(copy, warn);
      return copy;
    },
  });
}

type Command = (...args: unknown[]) => Promise<unknown>;
type Callback = (error: Error | null, reply?: unknown) => void;

/** A refusal ioredis would print: which errors, the reply it takes instead, and what to say. */
interface Refusal {
  readonly matches: RegExp;
  readonly instead: unknown;
  readonly advice: (error: Error) => string;
}

const READY_CHECK_REFUSED: Refusal = {
  matches: /NOPERM/,
  instead: '',
  advice: (error) =>
    `Redis refuses INFO to the lock store's connection (${error.message}), so ioredis skips ` +
    'its ready check: it will not wait for a server that is still loading its data, nor ' +
    "check a Sentinel master's role. Grant the lock user +info to keep the check.",
};

/** Redis 5's and Redis 6's replies to AUTH on a server that has no password. */
const PASSWORD_NOT_NEEDED: Refusal = {
  matches: /no password is set|without any password configured/,
  instead: 'OK',
  advice: (error) =>
    `Redis needs no password, but the lock store's connection has one (${error.message}). ` +
    "It connects without it: remove the password from the module's options, or set one on the server.",
};

/**
 * `command`'s reply, where a `refusal` is answered with its reply instead, once `warn` has said
 * why. A trailing callback (the ready check's, and ioredis 5's AUTH) hears the same; ioredis
 * reads only that, and it handles the promise's rejection.
 */
function answered(
  command: Command,
  args: unknown[],
  refusal: Refusal,
  warn: (message: string) => void,
): Promise<unknown> {
  const callback = typeof args.at(-1) === 'function' ? (args.pop() as Callback) : undefined;
  const reply = command(...args).catch((error: Error) => {
    if (!refusal.matches.test(String(error?.message))) throw error;
    warn(refusal.advice(error));
    return refusal.instead;
  });
  if (callback) {
    reply.then(
      (value) => callback(null, value),
      (error: Error) => callback(error),
    );
  }
  return reply;
}
