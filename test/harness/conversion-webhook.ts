/**
 * The kit's conversion webhook for the whole integration tier, as envtest provides one: in a real
 * cluster the API server calls the operator's webhook Service, which nothing can route to here
 * (no kube-proxy, simulated pods). So this process serves `/convert` for the kit's converting
 * kinds on loopback — with the reconciler's own code (operator/runtime/webhooks/conversion-review.ts) —
 * and a mutating webhook on CustomResourceDefinitions points every CRD whose conversion calls a
 * Service at it instead: whoever installs the CRD (dist/, Helm, a consumer app) gets a working
 * conversion, and the tests apply the manifests exactly as users do.
 *
 * A test that runs a reconciler's own conversion webhook registers its CRD with a `url` of its
 * own; this leaves such CRDs alone, and the CRDs of kinds not the kit's (they keep their Service,
 * which `--webhook-loopback` routes to the reconciler run for them).
 *
 * The server runs in a process of its own: jest runs a lone test file in its own process, whose
 * synchronous kubectl calls would otherwise keep the server from answering the API server.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { type ChildProcess, spawn } from 'node:child_process';
import { KIT_CONTROLLERS } from '../../constructs/kit-controllers';
import { convertingKinds } from '../../constructs/contract/webhook-paths';
import { convertReview, type ConversionRequest } from '../../operator/runtime/webhooks/conversion-review';
import { selfSignedCertificate } from '../../operator/runtime/webhooks/self-signed';
import { kubectlAsync } from '../support/kube';

/** The MutatingWebhookConfiguration that points CRDs' conversion at this server. */
export const LOOPBACK_CONVERSION_CONFIGURATION = 'opkit-test-conversion-on-loopback';
/** A CRD labelled with this, "false", keeps its conversion Service (for tests of the egress path). */
export const KEEP_CONVERSION_SERVICE_LABEL = 'testing.cdk8s-operator-kit/conversion-on-loopback';
const MUTATE_PATH = '/crd-conversion-on-loopback';

export interface ConversionHarness {
  /** The URL CRDs' conversion webhooks are pointed at. */
  readonly url: string;
  close(): Promise<void>;
}

interface ClientConfig {
  url?: string;
  service?: unknown;
  caBundle?: string;
}
interface CrdObject {
  spec?: { conversion?: { strategy?: string; webhook?: { clientConfig?: ClientConfig } } };
}

/** Serves both webhooks on a free loopback port; resolves with its address and CA bundle. */
async function serve(): Promise<{ base: string; caBundle: string }> {
  const kinds = convertingKinds(KIT_CONTROLLERS);
  const certificate = selfSignedCertificate('127.0.0.1', ['127.0.0.1'], 30);
  const caBundle = Buffer.from(certificate.cert).toString('base64');
  let convertUrl = '';
  const server = https.createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
    void answer(req, res, (body) => {
      if ((req.url ?? '').split('?')[0] === '/convert') {
        const request = (body as { request: ConversionRequest }).request;
        return {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'ConversionReview',
          response: convertReview(kinds, request),
        };
      }
      const request = (body as { request: { uid: string; object: CrdObject } }).request;
      const clientConfig = request.object.spec?.conversion?.webhook?.clientConfig;
      const wanted: ClientConfig = { url: convertUrl, caBundle };
      const needed =
        clientConfig &&
        (clientConfig.service !== undefined || (clientConfig.url === convertUrl && clientConfig.caBundle !== caBundle));
      const patch = needed ? [{ op: 'replace', path: '/spec/conversion/webhook/clientConfig', value: wanted }] : [];
      return {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: {
          uid: request.uid,
          allowed: true,
          ...(patch.length
            ? { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') }
            : {}),
        },
      };
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  convertUrl = `${base}/convert`;
  return { base, caBundle };
}

/** Starts the server's process and registers the mutating webhook with the API server `kubeconfig` reaches. */
export async function startConversionHarness(kubeconfig: string): Promise<ConversionHarness> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', __filename, '--serve'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // Never outlive the test run.
  process.once('exit', () => child.kill('SIGTERM'));
  const { base, caBundle } = await new Promise<{ base: string; caBundle: string }>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve(JSON.parse(line) as { base: string; caBundle: string });
    });
    child.once('exit', (code) => {
      reject(new Error(`the conversion webhook server exited (${code})`));
    });
  });
  const convertUrl = `${base}/convert`;
  const configuration = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: LOOPBACK_CONVERSION_CONFIGURATION },
    webhooks: [
      {
        name: 'crd-conversion-on-loopback.test.opkit',
        clientConfig: { url: `${base}${MUTATE_PATH}`, caBundle },
        objectSelector: {
          matchExpressions: [{ key: KEEP_CONVERSION_SERVICE_LABEL, operator: 'NotIn', values: ['false'] }],
        },
        rules: [
          {
            apiGroups: ['apiextensions.k8s.io'],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['customresourcedefinitions'],
          },
        ],
        matchConditions: [
          {
            name: 'converts-through-a-webhook',
            expression:
              "has(object.spec.conversion) && object.spec.conversion.strategy == 'Webhook' && has(object.spec.conversion.webhook)",
          },
          {
            // Only the kinds this server converts: a user's kind (the example app's Greeting)
            // keeps its Service, which a reconciler run with --webhook-loopback routes to itself.
            name: 'a-kit-kind',
            expression: `object.metadata.name in ${JSON.stringify(convertingKinds(KIT_CONTROLLERS).map((k) => k.crdName))}`,
          },
        ],
        failurePolicy: 'Fail',
        sideEffects: 'None',
        timeoutSeconds: 5,
        admissionReviewVersions: ['v1'],
      },
    ],
  };
  await kubectl(kubeconfig, ['apply', '--server-side', '-f', '-'], JSON.stringify(configuration));
  await untilEffective(kubeconfig, convertUrl);
  return {
    url: convertUrl,
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => {
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** Waits until the API server calls the mutating webhook (it loads configurations asynchronously). */
async function untilEffective(kubeconfig: string, convertUrl: string): Promise<void> {
  // A kit kind's CRD (the webhook rewrites only those), created as a dry run: never stored.
  const [kind] = convertingKinds(KIT_CONTROLLERS);
  if (!kind) throw new Error('the kit has no converting kind to probe the webhook with');
  const probe = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: kind.crdName },
    spec: {
      group: kind.group,
      scope: 'Namespaced',
      names: { kind: kind.kind, plural: kind.plural, singular: kind.singular, listKind: `${kind.kind}List` },
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
        { name: 'v2', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object' } } },
      ],
      conversion: {
        strategy: 'Webhook',
        webhook: {
          clientConfig: { service: { name: 'probe', namespace: 'default', path: '/convert' } },
          conversionReviewVersions: ['v1'],
        },
      },
    },
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    // Not synchronous: this very process answers the webhook the dry run calls.
    const out = await kubectl(
      kubeconfig,
      ['create', '--dry-run=server', '-o', 'json', '-f', '-'],
      JSON.stringify(probe),
    ).catch(() => undefined);
    const url =
      out === undefined ? undefined : (JSON.parse(out) as CrdObject).spec?.conversion?.webhook?.clientConfig?.url;
    if (url === convertUrl) return;
    if (Date.now() > deadline) throw new Error('the loopback conversion webhook did not take effect in 30 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function kubectl(kubeconfig: string, args: string[], input: string): Promise<string> {
  const r = await kubectlAsync(args, { input, kubeconfig });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

async function answer(req: IncomingMessage, res: ServerResponse, handle: (body: unknown) => unknown): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  try {
    const out = handle(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(out));
  } catch (err) {
    res.writeHead(500, { 'Content-Type': 'text/plain' });
    res.end(err instanceof Error ? err.message : String(err));
  }
}

if (process.argv.includes('--serve')) {
  serve().then(
    (address) => {
      process.stdout.write(`${JSON.stringify(address)}\n`);
    },
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    },
  );
}
