/**
 * The client configs of what calls the operator (operator/runtime/webhooks/client-configs.ts):
 * found where each kind of object keeps them, and changed in one JSON patch guarded by the
 * resourceVersion read, so a change made in between is never overwritten.
 */
import { BuiltinTypes, type KubeObject } from '../../../../constructs/contract';
import { isConflict } from '../../../../operator/runtime/client';
import {
  conversionClientConfigs,
  patchClientConfigs,
  webhookClientConfigs,
} from '../../../../operator/runtime/webhooks/client-configs';
import { FakeKubeClient } from '../../../../testing/fake-kube-client';

const webhooks: KubeObject = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  metadata: { name: 'memcached-validating' },
  webhooks: [
    {
      name: 'a',
      clientConfig: { service: { name: 'memcached-webhook', namespace: 'ops', path: '/validate', port: 443 } },
    },
    { name: 'b', clientConfig: { url: 'https://127.0.0.1:9443/validate', caBundle: 'Q0E=' } },
    { name: 'c' },
  ],
};

const crd = (strategy: string): KubeObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'memcacheds.cache.example.com' },
  spec: {
    conversion: {
      strategy,
      ...(strategy === 'Webhook'
        ? { webhook: { clientConfig: { service: { name: 'memcached-webhook', namespace: 'ops', path: '/convert' } } } }
        : {}),
    },
  },
});

describe('client configs', () => {
  test("a WebhookConfiguration's: each webhook's, by its JSON pointer; one without a config has none", () => {
    expect(webhookClientConfigs(webhooks)).toEqual([
      {
        path: '/webhooks/0/clientConfig',
        config: {
          url: undefined,
          caBundle: undefined,
          service: { name: 'memcached-webhook', namespace: 'ops', path: '/validate', port: 443 },
        },
      },
      {
        path: '/webhooks/1/clientConfig',
        config: { url: 'https://127.0.0.1:9443/validate', caBundle: 'Q0E=', service: undefined },
      },
    ]);
  });

  test("a CRD's: its conversion webhook's, only when its strategy is Webhook", () => {
    expect(conversionClientConfigs(crd('Webhook'))).toEqual([
      expect.objectContaining({ path: '/spec/conversion/webhook/clientConfig' }),
    ]);
    expect(conversionClientConfigs(crd('None'))).toEqual([]);
  });

  test('patchClientConfigs: one patch guarded by the resourceVersion read; none when nothing changes; undefined when not installed', async () => {
    const client = new FakeKubeClient();
    const type = BuiltinTypes.CustomResourceDefinition;
    expect(await patchClientConfigs(client, type, 'memcacheds.cache.example.com', () => [])).toBeUndefined();
    client.seed(type, crd('Webhook'));
    expect(await patchClientConfigs(client, type, 'memcacheds.cache.example.com', () => [])).toBe(0);
    expect(client.writes).toEqual([]);
    const setCa = (o: KubeObject) =>
      conversionClientConfigs(o).map((c) => ({ op: 'add' as const, path: `${c.path}/caBundle`, value: 'bmV3' }));
    expect(await patchClientConfigs(client, type, 'memcacheds.cache.example.com', setCa)).toBe(1);
    const stored = client.peek(type, 'memcacheds.cache.example.com');
    expect(conversionClientConfigs(stored as KubeObject)[0]?.config.caBundle).toBe('bmV3');
    // Changed by someone between the read and the patch: the precondition refuses it.
    const racing = await patchClientConfigs(client, type, 'memcacheds.cache.example.com', (o) => {
      void client.update(type, { ...(o as any), metadata: { ...o.metadata } });
      return setCa(o);
    }).catch((err: unknown) => err);
    expect(isConflict(racing)).toBe(true);
  });
});
