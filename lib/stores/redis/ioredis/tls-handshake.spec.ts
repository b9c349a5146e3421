import { Redis } from 'ioredis';
import { downReason } from './tls-handshake.js';

describe('downReason', () => {
  const tls = new Redis({ lazyConnect: true, tls: {} });
  const plain = new Redis({ lazyConnect: true });
  afterAll(() => [tls, plain].forEach((client) => client.disconnect()));

  // The alert a server that wants a client certificate sends; a loaded machine may deliver it
  // before the reset that follows it, in whatever state the connection is.
  const alert = Object.assign(
    new Error(
      '803C459AC67F0000:error:0A00045C:SSL routines:ssl3_read_bytes:tlsv13 alert certificate required:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 116\n',
    ),
    { code: 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED' },
  );

  it('names the client certificate for a TLS alert about it', () => {
    const reason = downReason(tls, alert);
    expect(reason.message).toMatch(
      /^the server refused the TLS connection \(.*116\): does it require a client certificate/,
    );
    expect(reason.cause).toBe(alert);
  });

  it('leaves the errors of a client without TLS as they are', () => {
    expect(downReason(plain, alert)).toBe(alert);
  });
});
