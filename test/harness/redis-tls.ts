import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { freePorts } from './redis-process.js';
import { RedisServer } from './redis-server.js';

/** PEM files made for one test file: a CA, a server certificate and a client certificate. */
export interface TestCertificates {
  readonly dir: string;
  readonly ca: string;
  readonly clientCert: string;
  readonly clientKey: string;
  /** Files, for redis-server's options and NODE_EXTRA_CA_CERTS. */
  readonly files: Readonly<Record<'ca' | 'serverCert' | 'serverKey', string>>;
}

/**
 * Makes a throwaway CA and, signed by it, a certificate for 127.0.0.1/localhost (the server) and
 * one for a client, with `openssl`, in a new temporary directory. EC keys: quick to make.
 */
export function makeCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'redis-tls-'));
  const path = (name: string): string => join(dir, name);
  const openssl = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...newKey,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=lock-test-ca',
  );
  const sign = (name: string, subject: string, extensions: string): void => {
    writeFileSync(path(`${name}.ext`), extensions);
    openssl(
      'req',
      '-new',
      ...newKey,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      subject,
    );
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    );
  };
  sign('server', '/CN=localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  sign('client', '/CN=lock-test-client', 'extendedKeyUsage=clientAuth\n');
  const read = (name: string): string => readFileSync(path(name), 'utf8');
  return {
    dir,
    ca: read('ca.crt'),
    clientCert: read('client.crt'),
    clientKey: read('client.key'),
    files: { ca: path('ca.crt'), serverCert: path('server.crt'), serverKey: path('server.key') },
  };
}

/**
 * A redis-server that speaks TLS on `tlsPort` (the CA, server and client certificates made for
 * it in `certificates`) and plain TCP on `server.port`, which the harness keeps for its own
 * checks (every library key expires) and which a test can point a TLS client at by mistake.
 */
export class TlsRedisServer {
  private constructor(
    readonly server: RedisServer,
    readonly tlsPort: number,
    readonly certificates: TestCertificates,
  ) {}

  /** `authClients`: redis-server's `tls-auth-clients` (`yes` asks every client for a certificate). */
  static async start(authClients: 'yes' | 'no' | 'optional' = 'yes'): Promise<TlsRedisServer> {
    const certificates = makeCertificates();
    const [plainPort, tlsPort] = await freePorts(2);
    const { files } = certificates;
    const server = await RedisServer.start(
      [
        ...['--tls-port', String(tlsPort), '--tls-auth-clients', authClients],
        ...['--tls-cert-file', files.serverCert, '--tls-key-file', files.serverKey],
        ...['--tls-ca-cert-file', files.ca],
      ],
      plainPort,
    );
    return new TlsRedisServer(server, tlsPort, certificates);
  }

  /** `rediss://` to the TLS port (Node must trust the CA: NODE_EXTRA_CA_CERTS, or `tls.ca`). */
  get url(): string {
    return `rediss://127.0.0.1:${this.tlsPort}`;
  }

  /** ioredis options for the TLS port: trusting the CA, and with the client certificate if asked. */
  options({ clientCertificate = true } = {}): RedisOptions {
    const { ca, clientCert, clientKey } = this.certificates;
    const identity = clientCertificate ? { cert: clientCert, key: clientKey } : {};
    return { host: '127.0.0.1', port: this.tlsPort, tls: { ca, ...identity } };
  }

  /** A plain connection for the test's own looking (the caller closes it). */
  probe(): Redis {
    return this.server.client();
  }

  async stop(): Promise<void> {
    try {
      await this.server.stop();
    } finally {
      rmSync(this.certificates.dir, { recursive: true, force: true });
    }
  }
}
