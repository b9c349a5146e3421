import { errorReply } from '../../store-refusals.js';

/*
 * Valkey GLIDE's errors as the store reads them. GLIDE's core rewords an error reply: the
 * reply's first word becomes a kind (`NOPERM this user…` arrives as "An error was signalled by
 * the server: - PermissionDenied: this user…", `WRONGTYPE Operation…` as "WRONGTYPE:
 * Operation…"). The refusals are read from Redis's own words (store-refusals.ts), so the
 * reply is written back as Redis sent it.
 */

/** GLIDE's kinds of error replies, by the first word of the reply Redis sent. */
const KIND_CODES: Readonly<Record<string, string>> = {
  ResponseError: 'ERR',
  PermissionDenied: 'NOPERM',
  NoScriptError: 'NOSCRIPT',
  ReadOnly: 'READONLY',
  BusyLoadingError: 'LOADING',
  ExecAbortError: 'EXECABORT',
  TryAgain: 'TRYAGAIN',
  ClusterDown: 'CLUSTERDOWN',
  CrossSlot: 'CROSSSLOT',
  MasterDown: 'MASTERDOWN',
  NotBusy: 'NOTBUSY',
  AuthenticationFailed: 'WRONGPASS',
};

const KIND_FORM = /^An error was signalled by the server: - (\w+): ([\s\S]*)$/;
const CODE_FORM = /^([A-Z][A-Z_-]+): ([\s\S]*)$/;
/** Credentials refused while connecting, inside GLIDE's connection error. */
const AUTH_IN_CONNECTION = /\b(WRONGPASS|NOAUTH): ?([^\n)]*)/;

/** The text of an error reply as Redis wrote it, from GLIDE's wording of it. */
export function replyText(message: string): string | undefined {
  const kind = KIND_FORM.exec(message);
  if (kind) return `${KIND_CODES[kind[1]!] ?? kind[1]} ${kind[2]}`;
  const code = CODE_FORM.exec(message);
  return code ? `${code[1]} ${code[2]}` : undefined;
}

/**
 * A GLIDE error in the adapters' shape (see ERROR_REPLY) when it is an error reply, or
 * credentials refused as the client connected; any other as is.
 */
export function asGlideReply(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  if (error.name === 'RequestError') {
    const text = replyText(error.message);
    return text === undefined ? error : errorReply(text, error);
  }
  const auth = AUTH_IN_CONNECTION.exec(error.message);
  return auth ? errorReply(`${auth[1]} ${auth[2]!.trim()}`, error) : error;
}

/** GLIDE's errors that say the connection, not the server's answer, failed. */
const CONNECTION_FAILURES: ReadonlySet<string> = new Set([
  'TimeoutError',
  'ConnectionError',
  'ClosingError',
]);

/** Whether a GLIDE error says the connection failed (no answer came). */
export function isConnectionFailure(error: unknown): boolean {
  return error instanceof Error && CONNECTION_FAILURES.has(error.name);
}
