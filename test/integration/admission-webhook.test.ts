/**
 * The admission webhooks against a real API server: the reconciler (as the operator's own
 * ServiceAccount) serves them over HTTPS with a certificate it makes, keeps in the one Secret the
 * Operator construct synthesizes and gets trusted through the configuration's caBundle. The API
 * server calls it on loopback (`url`, as envtest registers webhooks: no Service can be routed
 * here); the configuration is the synthesized one otherwise, limited to this file's namespace.
 */
import { X509Certificate } from 'node:crypto';
import { Testing } from 'cdk8s';
import { WebAppOperator } from '../../constructs';
import { freePort } from '../../testing/control-plane';
import { createTestNamespace, eventually, exists, getJson, installDist, kubectl, kubectlOk } from '../support/kube';
import { ReconcilerProcess, serviceAccountKubeconfig } from '../support/reconciler';

const CONFIGURATION = 'webapp-webhook';
const SECRET = 'webapp-webhook-cert';

jest.setTimeout(180_000);

let ns: string;
let port: number;
let reconciler: ReconcilerProcess | undefined;

/** The synthesized webhook objects, the configuration pointed at the reconciler on loopback. */
function webhookObjects(namespace: string, webhookPort: number): object[] {
  const chart = Testing.chart();
  new WebAppOperator(chart, 'webapp', { admissionWebhooks: true, watchNamespace: namespace });
  return Testing.synth(chart)
    .filter(
      (o) =>
        ['ValidatingWebhookConfiguration', 'Secret'].includes(o.kind) ||
        String(o.metadata.name).startsWith('webapp-webhook'),
    )
    .filter((o) => o.kind !== 'Service')
    .map((o) =>
      o.kind === 'ValidatingWebhookConfiguration'
        ? {
            ...o,
            webhooks: o.webhooks.map((w: any) => ({
              ...w,
              clientConfig: { url: `https://127.0.0.1:${webhookPort}${w.clientConfig.service.path}` },
            })),
          }
        : o,
    );
}

const startReconciler = () =>
  ReconcilerProcess.start({
    kubeconfig: serviceAccountKubeconfig({ namespace: 'webapp-system', serviceAccount: 'webapp-operator' }),
    args: [
      '--controllers=application,webapp',
      `--namespace=${ns}`,
      `--webhook-bind-address=127.0.0.1:${port}`,
      `--webhook-cert-secret=${SECRET}`,
      '--webhook-cert-hosts=127.0.0.1',
      `--webhook-configuration=${CONFIGURATION}`,
    ],
    name: 'webapp-webhooks',
    env: { POD_NAMESPACE: 'webapp-system' },
  });

const application = (name: string, host: string) =>
  JSON.stringify({
    apiVersion: 'app.aiops.org/v1',
    kind: 'Application',
    metadata: { name },
    spec: { image: 'nginx:alpine', port: 8080, ingress: { host, className: 'nginx' } },
  });

beforeAll(async () => {
  installDist();
  kubectlOk(['wait', '--for', 'condition=established', '--timeout=60s', 'crd/applications.app.aiops.org']);
  ns = createTestNamespace('admission');
  port = await freePort();
  kubectlOk(['apply', '--server-side', '-f', '-'], {
    input: webhookObjects(ns, port)
      .map((o) => JSON.stringify(o))
      .join('\n'),
  });
  reconciler = await startReconciler();
});

afterAll(async () => {
  // Fail-closed: the configuration must not outlive the reconciler that answers it.
  kubectl(['delete', 'validatingwebhookconfiguration', CONFIGURATION, '--ignore-not-found']);
  kubectl([
    'delete',
    'clusterrole,clusterrolebinding',
    `${CONFIGURATION}-configuration-role`,
    `${CONFIGURATION}-configuration-rolebinding`,
    '--ignore-not-found',
  ]);
  if (reconciler) expect((await reconciler.stop()).code).toBe(0);
});

describe('admission webhooks served by the reconciler', () => {
  test('it made its certificate, kept it in the Secret, and the configuration trusts it', () => {
    const secret = getJson(['get', 'secret', SECRET, '-n', 'webapp-system']);
    const cert = Buffer.from(secret.data['tls.crt'], 'base64').toString();
    expect(new X509Certificate(cert).subjectAltName).toContain('IP Address:127.0.0.1');
    const config = getJson(['get', 'validatingwebhookconfiguration', CONFIGURATION]);
    for (const w of config.webhooks) expect(Buffer.from(w.clientConfig.caBundle, 'base64').toString()).toBe(cert);
  });

  test('an Application asking for a host another one already routes is refused, naming spec.ingress.host', async () => {
    kubectlOk(['apply', '-n', ns, '-f', '-'], { input: application('first', 'shop.example.com') });
    await eventually('its Ingress', () => exists(['get', 'ingress', 'first', '-n', ns]) || undefined);
    const r = kubectl(['apply', '-n', ns, '-f', '-'], { input: application('second', 'shop.example.com') });
    expect(r.code).not.toBe(0);
    // kubectl shows the causes the webhook gave: the field, the value, why.
    expect(r.stderr).toContain('The request is invalid');
    expect(r.stderr).toContain(
      `spec.ingress.host: Invalid value: "shop.example.com": host shop.example.com path / is already routed by Ingress ${ns}/first`,
    );
    expect(exists(['get', 'application', 'second', '-n', ns])).toBe(false);
  });

  test('a free host is allowed; moving it onto the taken host is refused; changing anything else is not', () => {
    kubectlOk(['apply', '-n', ns, '-f', '-'], { input: application('second', 'other.example.com') });
    const moved = kubectl([
      'patch',
      'application',
      'second',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"spec":{"ingress":{"host":"shop.example.com"}}}',
    ]);
    expect(moved.code).not.toBe(0);
    expect(moved.stderr).toContain('spec.ingress.host');
    kubectlOk(['patch', 'application', 'first', '-n', ns, '--type=merge', '-p', '{"spec":{"replicas":2}}']);
  });

  test('while no reconciler answers, creates are refused (fail-closed) but deletes never are; a new start renews a certificate that no longer fits', async () => {
    expect((await reconciler?.stop())?.code).toBe(0);
    reconciler = undefined;
    const refused = kubectl(['apply', '-n', ns, '-f', '-'], { input: application('third', 'third.example.com') });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('failed calling webhook "vapplication.app.aiops.org"');
    kubectlOk(['delete', 'application', 'second', '-n', ns, '--wait=false']);

    // A certificate for another name in the Secret (as after the Service was renamed): replaced.
    const before = getJson(['get', 'secret', SECRET, '-n', 'webapp-system']).data['tls.crt'];
    kubectlOk([
      'patch',
      'secret',
      SECRET,
      '-n',
      'webapp-system',
      '--type=merge',
      '-p',
      JSON.stringify({ data: { 'tls.crt': Buffer.from('not a certificate').toString('base64') } }),
    ]);
    reconciler = await startReconciler();
    const after = getJson(['get', 'secret', SECRET, '-n', 'webapp-system']).data['tls.crt'];
    expect(after).not.toBe(before);
    await eventually(
      'a create to be allowed again',
      () =>
        kubectl(['apply', '-n', ns, '-f', '-'], { input: application('third', 'third.example.com') }).code === 0 ||
        undefined,
    );
  });
});
