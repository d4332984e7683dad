/**
 * The local control plane never sends a byte off the machine: kube-apiserver's calls to webhooks
 * and conversion Services go through the harness's egress proxy, which lets through loopback and
 * Services routed to a local server, and refuses everything else at once. The service CIDR
 * (10.0.0.0/24) is routable off a developer's machine; without the proxy, a conversion whose
 * operator is not running made the API server dial 10.0.0.x:443.
 */
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { selfSignedCertificate } from '../../operator/runtime/webhooks/self-signed';
import { addEgressRoute, egressDecisions, isLoopbackHost } from '../../testing/egress-proxy';
import { KEEP_CONVERSION_SERVICE_LABEL } from '../harness/conversion-webhook';
import { createTestNamespace, eventually, getJson, kubectlAsync, kubectlOk, testIf } from '../support/kube';

const egressLog = process.env.OPKIT_TEST_EGRESS_LOG ?? '';
const test = testIf(
  egressLog !== '',
  'the harness did not start this control plane (OPKIT_KUBECONFIG): no egress proxy',
);

let ns = '';
const group = `egress${Math.random().toString(36).slice(2, 8)}.opkit.test`;
const crdName = `probes.${group}`;

/** The decisions the proxy logged for one Service. */
function decisionsFor(service: string) {
  return egressDecisions(egressLog).filter((d) => d.service === service);
}

/** A CRD with two versions whose conversion calls Service `probe-webhook` (kept: not pointed at loopback). */
function probeCrd(caBundle: string) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: crdName, labels: { [KEEP_CONVERSION_SERVICE_LABEL]: 'false' } },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind: 'Probe', plural: 'probes', singular: 'probe', listKind: 'ProbeList' },
      versions: ['v1', 'v1alpha1'].map((name) => ({
        name,
        served: true,
        storage: name === 'v1',
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      })),
      conversion: {
        strategy: 'Webhook',
        webhook: {
          clientConfig: { service: { name: 'probe-webhook', namespace: ns, path: '/convert', port: 443 }, caBundle },
          conversionReviewVersions: ['v1'],
        },
      },
    },
  };
}

/** A conversion webhook on loopback that only rewrites apiVersion, with a certificate for the Service's name. */
async function localConverter(
  serviceHost: string,
): Promise<{ port: number; caBundle: string; calls: () => number; close(): void }> {
  const certificate = selfSignedCertificate(serviceHost, [serviceHost]);
  let calls = 0;
  const server = https.createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      calls++;
      const review = JSON.parse(body) as {
        request: { uid: string; desiredAPIVersion: string; objects: Record<string, unknown>[] };
      };
      const { uid, desiredAPIVersion, objects } = review.request;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'ConversionReview',
          response: {
            uid,
            result: { status: 'Success' },
            convertedObjects: objects.map((o) => ({ ...o, apiVersion: desiredAPIVersion })),
          },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    caBundle: Buffer.from(certificate.cert).toString('base64'),
    calls: () => calls,
    close: () => server.close(),
  };
}

let converter: Awaited<ReturnType<typeof localConverter>> | undefined;

beforeAll(async () => {
  if (!egressLog) return;
  ns = createTestNamespace('egress');
  // The Service exists (so the API server resolves it to a cluster IP) and nothing serves it.
  kubectlOk(['create', 'service', 'clusterip', 'probe-webhook', '--tcp=443:9443', '-n', ns]);
  converter = await localConverter(`probe-webhook.${ns}.svc`);
  kubectlOk(['apply', '--server-side', '-f', '-'], { input: JSON.stringify(probeCrd(converter.caBundle)) });
  kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', `crd/${crdName}`]);
  // Stored in v1: a v1 read needs no conversion.
  kubectlOk(['apply', '-f', '-'], {
    input: JSON.stringify({ apiVersion: `${group}/v1`, kind: 'Probe', metadata: { name: 'p', namespace: ns } }),
  });
});

afterAll(() => {
  converter?.close();
  if (ns) kubectlOk(['delete', 'crd', crdName, '--ignore-not-found', '--wait=false']);
});

test('with no local server for the Service, a request in the other version fails at once, and the call never leaves the machine', async () => {
  const service = `probe-webhook.${ns}.svc:443`;
  const clusterIp = getJson(['get', 'service', 'probe-webhook', '-n', ns]).spec.clusterIP as string;
  // Not synchronous: nothing in this process may hold up an answer (there is none to give here).
  const got = await kubectlAsync(['get', `probes.v1alpha1.${group}`, 'p', '-n', ns, '-o', 'json']);
  expect(got.code).not.toBe(0);
  // Refused by the proxy, not timed out: the API server says why, naming the address it asked for.
  expect(got.stderr).toContain(`while dialing ${clusterIp}:443, code 403`);
  expect(got.stderr).not.toMatch(/deadline exceeded|i\/o timeout|Client\.Timeout/i);
  const refused = decisionsFor(service);
  expect(refused.length).toBeGreaterThan(0);
  expect(refused.every((d) => d.decision === 'refused' && d.target === `${clusterIp}:443` && d.via === undefined)).toBe(
    true,
  );
  expect(converter?.calls()).toBe(0);
});

test('routed to a local server, the same conversion is served by it', async () => {
  const service = `probe-webhook.${ns}.svc:443`;
  addEgressRoute(egressLog, service, `127.0.0.1:${String(converter?.port)}`);
  const got = await eventually('the Probe read as v1alpha1', async () => {
    const r = await kubectlAsync(['get', `probes.v1alpha1.${group}`, 'p', '-n', ns, '-o', 'json']);
    return r.code === 0 ? (JSON.parse(r.stdout) as { apiVersion: string }) : undefined;
  });
  expect(got.apiVersion).toBe(`${group}/v1alpha1`);
  expect(converter?.calls()).toBeGreaterThan(0);
  expect(
    decisionsFor(service).some((d) => d.decision === 'routed' && d.via === `127.0.0.1:${String(converter?.port)}`),
  ).toBe(true);
});

test('a route can only lead to this machine', () => {
  expect(() => {
    addEgressRoute(egressLog, `elsewhere.${ns}.svc:443`, '10.0.0.9:443');
  }).toThrow(/this machine only/);
});

test("every connection the API server made so far, this suite's other files included, stayed on loopback", () => {
  const decisions = egressDecisions(egressLog);
  expect(decisions.length).toBeGreaterThan(0);
  for (const d of decisions) {
    if (d.decision === 'refused') expect(d.via).toBeUndefined();
    else
      expect({ target: d.target, via: d.via, loopback: isLoopbackHost(d.via?.replace(/:\d+$/, '') ?? '') }).toEqual({
        target: d.target,
        via: d.via,
        loopback: true,
      });
  }
});
