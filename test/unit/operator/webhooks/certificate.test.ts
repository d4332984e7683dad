/**
 * The webhook server's self-managed certificate (operator/runtime/webhooks/certificate.ts): made
 * once and kept in the operator's Secret, renewed when a third of its life is left, taken from
 * another replica that wrote first, and trusted by every webhook and conversion that calls it.
 */
import pino from 'pino';
import { BuiltinTypes, type KubeObject } from '../../../../constructs/contract';
import { ensureWebhookCertificate, goodFor } from '../../../../operator/runtime/webhooks/certificate';
import { selfSignedCertificate } from '../../../../operator/runtime/webhooks/self-signed';
import { FakeKubeClient } from '../../../../testing/fake-kube-client';

describe('the self-managed webhook certificate', () => {
  const logger = pino({ level: 'silent' });
  /** A Secret and a configuration in memory, as the API server would keep them. */
  function cluster() {
    const secret: any = { metadata: { name: 's', namespace: 'ns', resourceVersion: '1' } };
    const config: any = {
      metadata: { name: 'c', resourceVersion: '1' },
      webhooks: [{ clientConfig: {} }, { clientConfig: {} }],
    };
    const client = {
      get: async (type: { kind: string }) => structuredClone(type.kind === 'Secret' ? secret : config),
      mergePatch: async (_t: unknown, _n: string, _ns: string, patch: any) => {
        if (patch.metadata.resourceVersion !== secret.metadata.resourceVersion) throw new Error('conflict');
        secret.data = { ...secret.data, ...patch.data };
        secret.metadata.resourceVersion = String(Number(secret.metadata.resourceVersion) + 1);
        return structuredClone(secret);
      },
      jsonPatch: async (_t: unknown, _n: string, _ns: unknown, body: any[]) => {
        for (const op of body.slice(1)) config.webhooks[Number(op.path.split('/')[2])].clientConfig.caBundle = op.value;
        config.metadata.resourceVersion = String(Number(config.metadata.resourceVersion) + 1);
      },
    };
    return { secret, config, client: client as never };
  }
  const hosts = ['svc.ns.svc', '127.0.0.1'];

  test('made once, kept in the Secret, trusted by every webhook of the configuration; the next start reuses it', async () => {
    const c = cluster();
    const options = { client: c.client, namespace: 'ns', secretName: 's', hosts, validatingConfiguration: 'c', logger };
    const first = await ensureWebhookCertificate(options);
    expect(goodFor(first, hosts, new Date())).toBe(true);
    expect(Buffer.from(c.secret.data['tls.crt'], 'base64').toString()).toBe(first.cert);
    for (const w of c.config.webhooks)
      expect(Buffer.from(w.clientConfig.caBundle, 'base64').toString()).toBe(first.cert);
    const rv = c.secret.metadata.resourceVersion;
    const again = await ensureWebhookCertificate(options);
    expect(again.cert).toBe(first.cert);
    expect(c.secret.metadata.resourceVersion).toBe(rv);
  });

  test('renewed when a third of its life is left, the old one still trusted beside it', async () => {
    const c = cluster();
    const options = { client: c.client, namespace: 'ns', secretName: 's', hosts, validatingConfiguration: 'c', logger };
    const first = await ensureWebhookCertificate({ ...options, validityDays: 30 });
    const later = new Date(Date.now() + 21 * 86_400_000);
    expect(goodFor(first, hosts, later)).toBe(false);
    const renewed = await ensureWebhookCertificate({ ...options, now: () => later });
    expect(renewed.cert).not.toBe(first.cert);
    const bundle = Buffer.from(c.config.webhooks[0].clientConfig.caBundle, 'base64').toString();
    expect(bundle).toBe(renewed.cert + first.cert);
  });

  test('not good for another host, or with another key', () => {
    const a = selfSignedCertificate('x', hosts);
    const b = selfSignedCertificate('x', hosts);
    expect(goodFor(a, ['other.ns.svc'], new Date())).toBe(false);
    expect(goodFor({ cert: a.cert, key: b.key }, hosts, new Date())).toBe(false);
    expect(goodFor(a, hosts, new Date())).toBe(true);
  });
});

describe('the self-managed webhook certificate, against the in-memory API server', () => {
  const logger = pino({ level: 'silent' });
  const hosts = ['memcached-webhook.ops.svc'];
  const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tls', namespace: 'ops' } };
  const crd: KubeObject = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'memcacheds.cache.example.com' },
    spec: {
      conversion: {
        strategy: 'Webhook',
        webhook: { clientConfig: { service: { name: 'memcached-webhook', namespace: 'ops', path: '/convert' } } },
      },
    },
  };
  const options = (client: FakeKubeClient) => ({
    client,
    namespace: 'ops',
    secretName: 'tls',
    hosts,
    conversionCrds: ['memcacheds.cache.example.com'],
    logger,
  });
  const tlsCrt = async (client: FakeKubeClient) => {
    const s = await client.get<KubeObject & { data?: Record<string, string> }>(BuiltinTypes.Secret, 'tls', 'ops');
    return Buffer.from(s.data?.['tls.crt'] ?? '', 'base64').toString();
  };

  test("a CRD's conversion webhook trusts the certificate", async () => {
    const client = new FakeKubeClient();
    client.seed(BuiltinTypes.Secret, secret);
    client.seed(BuiltinTypes.CustomResourceDefinition, crd);
    const made = await ensureWebhookCertificate(options(client));
    const stored = await client.get<any>(BuiltinTypes.CustomResourceDefinition, 'memcacheds.cache.example.com');
    const bundle = stored.spec.conversion.webhook.clientConfig.caBundle as string;
    expect(Buffer.from(bundle, 'base64').toString()).toBe(made.cert);
    expect(await tlsCrt(client)).toBe(made.cert);
  });

  test("two replicas starting together: the one that writes second takes the first one's certificate", async () => {
    const client = new FakeKubeClient();
    client.seed(BuiltinTypes.Secret, secret);
    client.seed(BuiltinTypes.CustomResourceDefinition, crd);
    // The other replica's write lands between this one's read of the Secret and its own write.
    const theirs = selfSignedCertificate(hosts[0]!, hosts);
    const mergePatch = client.mergePatch.bind(client);
    let raced = false;
    client.mergePatch = (async (type: any, name: string, namespace: string | undefined, patch: unknown) => {
      if (!raced && type.kind === 'Secret') {
        raced = true;
        const current = await client.get<KubeObject>(BuiltinTypes.Secret, 'tls', 'ops');
        await mergePatch(BuiltinTypes.Secret, 'tls', 'ops', {
          metadata: { resourceVersion: current.metadata.resourceVersion },
          data: {
            'tls.crt': Buffer.from(theirs.cert).toString('base64'),
            'tls.key': Buffer.from(theirs.key).toString('base64'),
          },
        });
      }
      return mergePatch(type, name, namespace, patch);
    }) as typeof client.mergePatch;
    const used = await ensureWebhookCertificate(options(client));
    expect(raced).toBe(true);
    expect(used).toEqual(theirs);
    expect(await tlsCrt(client)).toBe(theirs.cert);
    const stored = await client.get<any>(BuiltinTypes.CustomResourceDefinition, 'memcacheds.cache.example.com');
    expect(Buffer.from(stored.spec.conversion.webhook.clientConfig.caBundle as string, 'base64').toString()).toBe(
      theirs.cert,
    );
  });

  test('a Secret that is not there is an error to report, and nothing is trusted', async () => {
    const client = new FakeKubeClient();
    client.seed(BuiltinTypes.CustomResourceDefinition, crd);
    await expect(ensureWebhookCertificate(options(client))).rejects.toThrow(/not ?found/i);
    const stored = await client.get<any>(BuiltinTypes.CustomResourceDefinition, 'memcacheds.cache.example.com');
    expect(stored.spec.conversion.webhook.clientConfig.caBundle).toBeUndefined();
  });
});
