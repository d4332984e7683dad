/**
 * The webhook server (operator/runtime/webhooks/server.ts) over HTTPS on loopback: each hook's
 * path answers an AdmissionReview, anything else 404; a hook that throws is refused fail-closed
 * with its reason, never left hanging; a conversion body that is not JSON is a 400; a renewed
 * certificate is served from the next connection on.
 */
import * as https from 'node:https';
import { X509Certificate } from 'node:crypto';
import pino from 'pino';
import { ChildMap, type ControllerDeclaration } from '../../../../constructs';
import { memcachedController } from '../../../../constructs/memcached/controller';
import { applicationController } from '../../../../constructs/webapp/controller';
import { WebhookServer } from '../../../../operator/runtime/webhooks/server';
import { selfSignedCertificate } from '../../../../operator/runtime/webhooks/self-signed';
import { application, ingress, reading } from './application-fixtures';

const logger = pino({ level: 'silent' });
const first = selfSignedCertificate('127.0.0.1', ['127.0.0.1']);
const renewed = selfSignedCertificate('127.0.0.1', ['127.0.0.1']);
const HOOK = '/validate-app-aiops-org-v1-application';

interface Answer {
  readonly status: number;
  readonly body: any;
  readonly servedCert: string;
}

/**
 * One request on a new connection, trusting `ca` (the two certificates share a subject, so each
 * request trusts the one it expects); what came back and which certificate served it.
 */
function post(port: number, path: string, body: string, method = 'POST', ca = first.cert): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path, method, ca, agent: false }, (res) => {
      const peer =
        res.socket && 'getPeerX509Certificate' in res.socket ? (res.socket as any).getPeerX509Certificate() : undefined;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({
          status: res.statusCode ?? 0,
          body: text ? JSON.parse(text) : undefined,
          servedCert: peer instanceof X509Certificate ? peer.fingerprint256 : '',
        });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const takenBy = ingress('team-b', 'theirs', 'shop.example.com');
const review = (uid: string, object: object) =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid, operation: 'CREATE', object },
  });

describe('the webhook server', () => {
  let server: WebhookServer;
  let port: number;
  let contextFails = false;

  beforeAll(async () => {
    server = new WebhookServer(
      [applicationController, memcachedController as ControllerDeclaration],
      () => {
        if (contextFails) throw new Error('the caches have not synced yet');
        return reading([takenBy])();
      },
      logger,
    );
    expect(server.hasHooks).toBe(true);
    expect(server.converting.map((k) => k.kind)).toEqual(['Memcached']);
    port = await server.listen('127.0.0.1', 0, first);
  });

  afterAll(async () => {
    await server.close();
  });

  test("a hook's path answers its AdmissionReview: allowed, or refused naming the field", async () => {
    const free = await post(port, HOOK, review('r1', application('shop', 'free.example.com')));
    expect(free.status).toBe(200);
    expect(free.body).toMatchObject({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'r1', allowed: true },
    });
    const taken = await post(port, HOOK, review('r2', application('shop', 'shop.example.com')));
    expect(taken.body.response).toMatchObject({ uid: 'r2', allowed: false, status: { code: 422, reason: 'Invalid' } });
    expect(taken.body.response.status.message).toContain('spec.ingress.host');
  });

  test('an unknown path, or a GET, is a 404', async () => {
    expect((await post(port, '/validate-nothing', review('r3', {}))).status).toBe(404);
    expect((await post(port, HOOK, '', 'GET')).status).toBe(404);
  });

  test('a hook that throws, or a body that is no review, is refused fail-closed with the reason', async () => {
    contextFails = true;
    try {
      const failed = await post(port, HOOK, review('r4', application('shop', 'x.example.com')));
      expect(failed.status).toBe(200);
      expect(failed.body.response).toMatchObject({
        uid: 'r4',
        allowed: false,
        status: { code: 500, reason: 'InternalError' },
      });
      expect(failed.body.response.status.message).toContain('the caches have not synced yet');
    } finally {
      contextFails = false;
    }
    const notAReview = await post(port, HOOK, JSON.stringify({ kind: 'AdmissionReview' }));
    expect(notAReview.body.response).toMatchObject({ uid: '', allowed: false });
    expect(notAReview.body.response.status.message).toContain('not an AdmissionReview');
  });

  test('a conversion body that is not JSON, or not a ConversionReview, is a 400', async () => {
    const garbled = await post(port, '/convert', '{');
    expect(garbled.status).toBe(400);
    expect(garbled.body.message).toMatch(/^not JSON/);
    const empty = await post(port, '/convert', JSON.stringify({ request: {} }));
    expect(empty.status).toBe(400);
    expect(empty.body.message).toContain('not a ConversionReview');
  });

  test('a renewed certificate is served from the next connection on', async () => {
    const before = await post(port, HOOK, review('r5', application('shop', 'free.example.com')));
    expect(before.servedCert).toBe(new X509Certificate(first.cert).fingerprint256);
    server.setCertificate(renewed);
    const after = await post(port, HOOK, review('r6', application('shop', 'free.example.com')), 'POST', renewed.cert);
    expect(after.servedCert).toBe(new X509Certificate(renewed.cert).fingerprint256);
    expect(after.body.response.allowed).toBe(true);
  });
});

test('a server with nothing to serve says so', () => {
  const idle = new WebhookServer([], () => ({ children: new ChildMap(), read: () => [] }), logger);
  expect(idle.hasHooks).toBe(false);
  expect(idle.hasWork).toBe(false);
});
