import { LockOptionsError } from '../../errors/lock.errors.js';

/*
 * A Redis URL in the module options is checked before ioredis sees it. ioredis takes almost any
 * string: `redis:/:secret@host:6379` (one slash) becomes a Unix socket path, which then appears
 * whole in every connection error and log line. So a URL must parse to a host (and a port, or
 * the default one), or be an explicit socket path, and a refusal says what is wrong with it
 * without quoting any of it: a mistyped URL is exactly the one whose password would show.
 */

const FORMS =
  'Give "redis://[user:password@]host[:port][/db]", "rediss://…" for TLS, ' +
  '"unix:/path/to/redis.sock", "host:port" or a port; percent-encode @ : / ? # in a password.';

/** Bare `host:port` or `[v6]:port`, as ioredis takes it: only host characters, digits after. */
const HOST_AND_PORT = /^(?:[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\]):\d{1,5}$/i;
const SCHEME = /^([a-z][a-z0-9+.-]*):/i;

/**
 * The connection string to hand ioredis for the URL given as `option` (as a message names it:
 * `LockModule "redis"`, `--redis`), or a `LockOptionsError` naming the option and what is
 * wrong, never the URL.
 */
export function redisUrlTarget(url: string, option: string): string {
  const target = targetOf(url);
  if (typeof target === 'string') return target;
  throw new LockOptionsError(`${option} is not a Redis URL: ${target.problem}. ${FORMS}`);
}

interface Problem {
  readonly problem: string;
}

function targetOf(url: string): string | Problem {
  // A value read from a file or an env var often ends in a newline; the URL parser would drop it.
  if (/[\s\p{Cc}]/u.test(url)) return { problem: 'it contains white space or control characters' };
  if (/^\d+$/.test(url)) return portTarget(url);
  if (url.startsWith('/') && !url.startsWith('//')) return socketTarget(url);
  if (HOST_AND_PORT.test(url)) return portOf(url.slice(url.lastIndexOf(':') + 1)) ?? url;
  const scheme = SCHEME.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'unix') return socketTarget(url.slice('unix:'.length).replace(/^\/\/(?=\/)/, ''));
  if (scheme === 'redis' || scheme === 'rediss') return serverTarget(url, scheme);
  if (scheme === 'redis-sentinel') {
    return {
      problem:
        'Sentinel is given as ioredis options, { sentinels: [{ host, port }], name }, not as a URL',
    };
  }
  return { problem: 'it is not a redis://, rediss:// or unix: URL' };
}

function portTarget(port: string): string | Problem {
  return portOf(port) ?? port;
}

/** A problem with a port number, if it has one. */
function portOf(port: string): Problem | undefined {
  const value = Number(port);
  return value >= 1 && value <= 65535 ? undefined : { problem: 'its port is not 1–65535' };
}

/** An absolute socket path (with ioredis's `?db=` and the like), in the form ioredis takes it. */
function socketTarget(path: string): string | Problem {
  const file = path.split('?')[0]!;
  // `//` would make ioredis read a host: `unix://name` is a host's name, not a path.
  if (!file.startsWith('/') || file.startsWith('//') || file.length < 2) {
    return { problem: 'its socket path is not an absolute path' };
  }
  // A mistyped URL read as a path has a ":" (user:password, host:port) or an "@"; no socket
  // path needs either, and a connection error would show the path whole.
  if (/[:@]/.test(file)) return { problem: 'its socket path has a ":" or "@", as a URL would' };
  return path;
}

/** `redis://` or `rediss://` with a host, an optional port and an optional database number. */
function serverTarget(url: string, scheme: string): string | Problem {
  const rest = url.slice(scheme.length + 1);
  if (!rest.startsWith('//')) return { problem: `"${scheme}:" is not followed by "//"` };
  let parsed: URL;
  try {
    parsed = new URL(`${scheme}:${rest}`);
  } catch {
    // The parser's error keeps the input: it is neither quoted nor kept as the cause.
    return { problem: 'it does not parse as a URL' };
  }
  return serverProblem(parsed) ?? `${scheme}:${rest}`;
}

function serverProblem({ hostname, port, pathname, hash }: URL): Problem | undefined {
  if (!hostname) return { problem: 'it names no host' };
  if (port && portOf(port)) return portOf(port);
  if (pathname !== '' && pathname !== '/' && !/^\/\d+$/.test(pathname)) {
    return { problem: 'what follows the host is not a database number' };
  }
  if (hash) return { problem: 'it has a "#" part' };
  return undefined;
}
