import type { Cluster, Redis } from 'ioredis';

/** Failures of the TCP connection itself, which a TLS client meets as any other does. */
const TCP_FAILURES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);

/** What a server without TLS makes a TLS client see: its plain reply read as a TLS record. */
const PLAIN_REPLY = /wrong version number|packet length too long|disconnected before secure/i;

/**
 * The reason a connection went down, in plain words when a TLS client did not get through its
 * handshake. A server without TLS never answers the handshake (Redis reads it as the start of a
 * command), so ioredis reports only "connect ETIMEDOUT", as if nothing listened there. A server
 * that wants a client certificate closes the connection once the client's side of a TLS 1.3
 * handshake is done, which ioredis reports as a bare "write ECONNRESET".
 */
export function downReason(client: Redis | Cluster, error: Error): Error {
  if (!isTlsClient(client)) return error;
  const { code } = error as NodeJS.ErrnoException;
  const reason = CERTIFICATE_ALERT.test(error.message)
    ? `the server refused the TLS connection (${error.message.trim()}): ${CLIENT_CERTIFICATE}`
    : client.status === 'connecting'
      ? handshakeFailure(client, error)
      : client.status === 'connect' && (code === 'ECONNRESET' || code === 'EPIPE')
        ? `the server closed the TLS connection before it was ready (${error.message}): ` +
          CLIENT_CERTIFICATE
        : undefined;
  return reason ? Object.assign(new Error(reason, { cause: error }), { code }) : error;
}

/**
 * The TLS alerts of a server that wants a client certificate it did not get, or did not trust.
 * Which one the client meets first, this alert or the reset that follows it, depends on timing.
 */
const CERTIFICATE_ALERT = /alert (certificate required|bad certificate|unknown ca)/i;
const CLIENT_CERTIFICATE =
  'does it require a client certificate (tls-auth-clients), and was it given one it trusts?';

function handshakeFailure(client: Redis, error: Error): string | undefined {
  const { code } = error as NodeJS.ErrnoException;
  if (code !== undefined && TCP_FAILURES.has(code)) return undefined;
  if (code === 'ETIMEDOUT') {
    return (
      `no TLS session within connectTimeout (${client.options.connectTimeout} ms): the server ` +
      'did not complete the TLS handshake, as a port without TLS does, or did not accept the ' +
      'connection. Point rediss:// or the "tls" option at the TLS port (Redis "tls-port")'
    );
  }
  const plain = PLAIN_REPLY.test(error.message) ? ': the port seems not to speak TLS' : '';
  return `the TLS handshake failed (${error.message})${plain}`;
}

/** A TLS client (not Sentinel's: its errors come from asking the sentinels as well). */
function isTlsClient(client: Redis | Cluster): client is Redis {
  return (
    !client.isCluster &&
    Boolean((client as Redis).options.tls) &&
    !(client as Redis).options.sentinels?.length
  );
}
