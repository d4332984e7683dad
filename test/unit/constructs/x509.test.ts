import { X509Certificate } from 'node:crypto';
import * as tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { issueCertificate } from '../../../constructs/contract/x509';

const DAY = 86_400_000;

function authority(name: string) {
  return issueCertificate({ commonName: name, ca: true, validForMs: 3650 * DAY });
}

test('a CA signs certificates, and each names its issuer as the CA names itself', () => {
  const ca = authority('kv-client-ca');
  const leaf = issueCertificate({
    commonName: 'kv-server',
    hosts: ['*.kv.prod.svc', 'kv-client', '127.0.0.1'],
    usages: ['server'],
    issuer: ca,
    validForMs: 365 * DAY,
  });
  const caCert = new X509Certificate(ca.cert);
  const x = new X509Certificate(leaf.cert);
  expect(caCert.ca).toBe(true);
  expect(x.ca).toBe(false);
  expect(x.verify(caCert.publicKey)).toBe(true);
  expect(x.checkIssued(caCert)).toBe(true);
  expect(x.issuer).toBe('CN=kv-client-ca');
  expect(x.subject).toBe('CN=kv-server');
  expect(x.subjectAltName).toBe('DNS:*.kv.prod.svc, DNS:kv-client, IP Address:127.0.0.1');
  expect(x.checkHost('kv-0.kv.prod.svc')).toBe('*.kv.prod.svc');
  expect(x.checkHost('kv-0.other.prod.svc')).toBeUndefined();
  // Signed by another CA, it does not verify.
  expect(x.verify(new X509Certificate(authority('other').cert).publicKey)).toBe(false);
});

test('validity runs from a minute before `now` for the given time, past 2049 too', () => {
  const now = new Date('2026-12-02T00:00:00Z');
  const x = new X509Certificate(issueCertificate({ commonName: 'x', validForMs: 30 * DAY, now }).cert);
  expect(new Date(x.validFrom).toISOString()).toBe('2026-12-01T23:59:00.000Z');
  expect(new Date(x.validTo).toISOString()).toBe('2027-01-01T00:00:00.000Z');
  const late = new X509Certificate(issueCertificate({ commonName: 'x', validForMs: 40 * 365 * DAY, now }).cert);
  expect(new Date(late.validTo).getUTCFullYear()).toBe(2066);
});

test('a key kept: the certificate renewed for the same key pair', () => {
  const first = issueCertificate({ commonName: 'x', validForMs: DAY });
  const again = issueCertificate({ commonName: 'x', validForMs: DAY, key: first.key });
  expect(again.key).toBe(first.key);
  expect(new X509Certificate(again.cert).publicKey.export({ type: 'spki', format: 'der' })).toEqual(
    new X509Certificate(first.cert).publicKey.export({ type: 'spki', format: 'der' }),
  );
  expect(new X509Certificate(again.cert).serialNumber).not.toBe(new X509Certificate(first.cert).serialNumber);
});

/**
 * One mutual-TLS handshake on loopback: what the server sent, or the error. Under TLS 1.3 a client
 * the server refuses learns it only after its handshake, from the server's alert: so the answer,
 * not the handshake, tells whether it was taken.
 */
async function handshake(server: tls.SecureContextOptions, client: tls.ConnectionOptions): Promise<string> {
  const srv = tls.createServer({ ...server, requestCert: true, rejectUnauthorized: true }, (s) => s.end('hello'));
  await new Promise<void>((resolve) =>
    srv.listen(0, '127.0.0.1', () => {
      resolve();
    }),
  );
  try {
    const { port } = srv.address() as AddressInfo;
    return await new Promise<string>((resolve) => {
      const socket = tls.connect({ ...client, host: '127.0.0.1', port }, () => undefined);
      let text = '';
      socket.on('data', (b: Buffer) => {
        text += b.toString();
      });
      socket.on('end', () => {
        resolve(text);
      });
      socket.on('error', (err: NodeJS.ErrnoException) => {
        resolve(`error: ${err.code ?? err.message}`);
      });
    });
  } finally {
    srv.close();
  }
}

describe('a real mutual-TLS handshake', () => {
  const ca = authority('kv-client-ca');
  const server = issueCertificate({
    commonName: 'kv-server',
    hosts: ['*.kv.prod.svc'],
    usages: ['server'],
    issuer: ca,
    validForMs: DAY,
  });
  const client = issueCertificate({ commonName: 'kv-client', usages: ['client'], issuer: ca, validForMs: DAY });
  const serverSide = { cert: server.cert, key: server.key, ca: ca.cert };

  test('a client with a certificate of the CA is served, the server checked by its name', async () => {
    await expect(
      handshake(serverSide, { ca: ca.cert, cert: client.cert, key: client.key, servername: 'kv-1.kv.prod.svc' }),
    ).resolves.toBe('hello');
  });

  test('a client without a certificate, or with one of another CA, is refused', async () => {
    const other = authority('other');
    const stranger = issueCertificate({ commonName: 'x', usages: ['client'], issuer: other, validForMs: DAY });
    const without = await handshake(serverSide, { ca: ca.cert, servername: 'kv-1.kv.prod.svc' });
    const foreign = await handshake(serverSide, {
      ca: ca.cert,
      cert: stranger.cert,
      key: stranger.key,
      servername: 'kv-1.kv.prod.svc',
    });
    for (const answer of [without, foreign]) expect(answer).not.toBe('hello');
  });

  test('a server certificate is no client certificate (usages), and a name it lacks is refused', async () => {
    const asClient = await handshake(serverSide, {
      ca: ca.cert,
      cert: server.cert,
      key: server.key,
      servername: 'kv-1.kv.prod.svc',
    });
    expect(asClient).not.toBe('hello');
    const wrongName = await handshake(serverSide, {
      ca: ca.cert,
      cert: client.cert,
      key: client.key,
      servername: 'kv-1.other.prod.svc',
    });
    expect(wrongName).toBe('error: ERR_TLS_CERT_ALTNAME_INVALID');
  });
});
