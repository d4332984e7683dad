/**
 * What a client outside an etcd cluster sees of its TLS, for the tests against real members: a
 * call with no certificate of its own, the serial a member serves, whether its peer port takes a
 * given certificate.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { connect as connectTls } from 'node:tls';
import { eventually } from './kube';

/** A call over TLS that checks the member but presents no certificate of its own. */
export function httpsWithout(url: string, ca: string, body: object): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: 'POST', ca, agent: false, timeout: 5000 }, (res) => {
      let text = '';
      res.on('data', (b: Buffer) => {
        text += b.toString();
      });
      res.on('end', () => {
        resolve(text);
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** The serial of the certificate a member serves on its client port now. */
export function servedSerial(host: string, tls: { ca: string; cert: string; key: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connectTls({ host, port: 2379, ...tls }, () => {
      resolve(socket.getPeerCertificate().serialNumber);
      socket.end();
    });
    socket.on('error', reject);
  });
}

/** Whether the peer port takes a TLS client presenting `tls` (a client certificate, not a peer's). */
export function peerHandshake(host: string, tls: { cert: string; key: string }): Promise<string> {
  return new Promise((resolve) => {
    // The peer CA is not the client's: the member is not checked here, only whether it takes us.
    const socket = connectTls({ host, port: 2380, cert: tls.cert, key: tls.key, rejectUnauthorized: false }, () => {
      socket.write('GET /members HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    let text = '';
    socket.on('data', (b: Buffer) => {
      text += b.toString();
    });
    socket.on('close', () => {
      resolve(text.startsWith('HTTP/1.1 200') ? `taken: ${text.slice(0, 80)}` : `refused: ${text.slice(0, 80)}`);
    });
    socket.on('error', (err) => {
      resolve(`refused: ${err.message}`);
    });
  });
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/**
 * A read, a write and a `member add` of a foreign peer, each as a client without a certificate of
 * its own would send it to `host`'s client port over TLS (checking the member against `ca`), and
 * its plain-HTTP twin: `[what, try over TLS, try over plain HTTP]`. Each try rejects when refused.
 */
export function triesWithoutCertificate(
  host: string,
  ca: string,
): readonly [string, () => Promise<string>, () => Promise<unknown>][] {
  const tries = [
    ['read', '/v3/kv/range', { key: b64('greeting') }],
    ['write', '/v3/kv/put', { key: b64('greeting'), value: b64('PWNED') }],
    ['member add', '/v3/cluster/member/add', { peerURLs: ['https://10.9.9.9:2380'], isLearner: true }],
  ] as const;
  return tries.map(([what, path, body]) => [
    what,
    () => httpsWithout(`https://${host}:2379${path}`, ca, body),
    () => plainHttp(`http://${host}:2379${path}`, body),
  ]);
}

/** A POST over plain HTTP; rejects unless the member answers 2xx. */
function plainHttp(url: string, body: object): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: false, timeout: 5000 }, (res) => {
      let text = '';
      res.on('data', (b: Buffer) => {
        text += b.toString();
      });
      res.on('end', () => {
        if ((res.statusCode ?? 500) < 300) resolve(text);
        else reject(new Error(`HTTP ${res.statusCode ?? 0}: ${text}`));
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** The serial `host` serves once it is no longer `before`: waits for a renewed certificate to be taken. */
export function renewedSerial(
  host: string,
  tls: { ca: string; cert: string; key: string },
  before: string,
  timeoutMs: number,
): Promise<string> {
  return eventually(
    `${host} to serve its renewed certificate`,
    async () => {
      const now = await servedSerial(host, tls).catch(() => undefined);
      return now && now !== before ? now : undefined;
    },
    timeoutMs,
  );
}
