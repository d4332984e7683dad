/**
 * What a client outside an etcd cluster sees of its TLS, for the tests against real members: a
 * call with no certificate of its own, the serial a member serves, whether its peer port takes a
 * given certificate.
 */
import * as https from 'node:https';
import { connect as connectTls } from 'node:tls';

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
