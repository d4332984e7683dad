import { Testing } from 'cdk8s';
import { type ControllerDeclaration, MemcachedOperator, WebAppOperator } from '../../../../constructs';
import { applicationController, webAppController } from '../../../../constructs/webapp/controller';
import { admissionRoutes, review } from '../../../../operator/runtime/webhooks/admission';
import { application as app, ingress, reading } from './application-fixtures';

describe('admission reviews', () => {
  test('each hook has its path, per version of its kind (kubebuilder convention)', () => {
    expect([...admissionRoutes([applicationController, webAppController]).keys()]).toEqual([
      '/validate-app-aiops-org-v1-application',
      '/validate-apps-example-com-v1alpha1-webapp',
    ]);
  });

  test('an Application asking for a host another Ingress routes is refused, 422 naming spec.ingress.host', () => {
    const r = review(
      'validate',
      applicationController,
      { uid: 'r1', operation: 'CREATE', object: app('shop', 'shop.example.com') },
      reading([ingress('team-b', 'their-shop', 'shop.example.com')]),
    );
    expect(r).toMatchObject({ uid: 'r1', allowed: false, status: { code: 422, reason: 'Invalid' } });
    expect(r.status?.message).toBe(
      'Application.app.aiops.org "shop" is invalid: spec.ingress.host: Invalid value: "shop.example.com": host shop.example.com path / is already routed by Ingress team-b/their-shop, which is older; choose another host or path',
    );
    expect(r.status?.details.causes).toEqual([
      expect.objectContaining({ field: 'spec.ingress.host', reason: 'FieldValueInvalid' }),
    ]);
  });

  test('allowed: a free host; an update that keeps its host (even in conflict); anything but create and update', () => {
    const taken = reading([ingress('team-b', 'their-shop', 'shop.example.com')]);
    expect(
      review(
        'validate',
        applicationController,
        { uid: 'a', operation: 'CREATE', object: app('x', 'free.example.com') },
        taken,
      ),
    ).toEqual({ uid: 'a', allowed: true });
    const old = app('shop', 'shop.example.com', 'u1');
    const changed = { ...old, spec: { ...old.spec, replicas: 3 } };
    expect(
      review(
        'validate',
        applicationController,
        { uid: 'b', operation: 'UPDATE', object: changed, oldObject: old },
        taken,
      ),
    ).toEqual({ uid: 'b', allowed: true });
    const moved = {
      ...old,
      spec: { ...old.spec, ingress: { host: 'shop.example.com', className: 'nginx', path: '/' } },
    };
    expect(
      review(
        'validate',
        applicationController,
        { uid: 'c', operation: 'UPDATE', object: moved, oldObject: app('shop', 'old.example.com', 'u1') },
        taken,
      ).allowed,
    ).toBe(false);
    expect(review('validate', applicationController, { uid: 'd', operation: 'DELETE', oldObject: old }, taken)).toEqual(
      {
        uid: 'd',
        allowed: true,
      },
    );
  });

  test('a WebApp names spec.domain', () => {
    const webapp = {
      apiVersion: 'apps.example.com/v1alpha1',
      kind: 'WebApp',
      metadata: { name: 'site', namespace: 'team-a' },
      spec: { replicas: 1, image: 'nginx', port: 80, domain: 'shop.example.com' },
    };
    const r = review(
      'validate',
      webAppController,
      { uid: 'w', operation: 'CREATE', object: webapp },
      reading([ingress('x', 'y', 'shop.example.com')]),
    );
    expect(r.status?.details.causes[0]?.field).toBe('spec.domain');
  });

  test('a default hook answers with a JSON patch of /spec, and none when nothing changes', () => {
    const decl = {
      ...applicationController,
      validate: undefined,
      default: (r: { spec: { replicas: number } }) => ({ ...r.spec, replicas: Math.max(r.spec.replicas, 2) }),
    } as unknown as ControllerDeclaration;
    expect([...admissionRoutes([decl]).keys()]).toEqual(['/mutate-app-aiops-org-v1-application']);
    const r = review('mutate', decl, { uid: 'm', operation: 'CREATE', object: app('a', 'a.example.com') }, reading([]));
    expect(r).toMatchObject({ uid: 'm', allowed: true, patchType: 'JSONPatch' });
    expect(JSON.parse(Buffer.from(r.patch ?? '', 'base64').toString())).toEqual([
      { op: 'replace', path: '/spec', value: { ...app('a', 'a.example.com').spec, replicas: 2 } },
    ]);
    const two = { ...app('a', 'a.example.com'), spec: { ...app('a', 'a.example.com').spec, replicas: 2 } };
    expect(review('mutate', decl, { uid: 'n', operation: 'UPDATE', object: two }, reading([]))).toEqual({
      uid: 'n',
      allowed: true,
    });
  });
});

describe('the Operator construct with admissionWebhooks', () => {
  const chart = Testing.chart();
  new WebAppOperator(chart, 'webapp', { admissionWebhooks: true });
  const docs = Testing.synth(chart);
  const find = (kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name);

  test('a fail-closed ValidatingWebhookConfiguration for create and update, never for objects being deleted', () => {
    const config = find('ValidatingWebhookConfiguration', 'webapp-webhook');
    expect(config.webhooks.map((w: any) => w.name)).toEqual(['vapplication.app.aiops.org', 'vwebapp.apps.example.com']);
    for (const w of config.webhooks) {
      expect(w).toMatchObject({
        failurePolicy: 'Fail',
        sideEffects: 'None',
        timeoutSeconds: 5,
        admissionReviewVersions: ['v1'],
        matchConditions: [{ expression: '!has(object.metadata.deletionTimestamp)' }],
      });
      expect(w.rules[0].operations).toEqual(['CREATE', 'UPDATE']);
      expect(w.clientConfig.service).toMatchObject({ name: 'webapp-webhook', namespace: 'webapp-system', port: 443 });
      expect(w.clientConfig.caBundle).toBeUndefined();
    }
    expect(config.webhooks[0].clientConfig.service.path).toBe('/validate-app-aiops-org-v1-application');
    expect(find('MutatingWebhookConfiguration', 'webapp-webhook')).toBeUndefined();
  });

  test('the Service, an empty Secret, and rights to exactly that Secret and that configuration', () => {
    expect(find('Service', 'webapp-webhook').spec.ports).toEqual([
      { name: 'webhook', port: 443, targetPort: 'webhook', protocol: 'TCP' },
    ]);
    const secret = find('Secret', 'webapp-webhook-cert');
    expect(secret.data).toBeUndefined();
    expect(secret.stringData).toBeUndefined();
    expect(find('Role', 'webapp-webhook-cert-role').rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['webapp-webhook-cert'], verbs: ['get', 'patch'] },
    ]);
    expect(find('ClusterRole', 'webapp-webhook-configuration-role').rules).toEqual([
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['validatingwebhookconfigurations'],
        resourceNames: ['webapp-webhook'],
        verbs: ['get', 'patch'],
      },
    ]);
    const container = find('Deployment', 'webapp-operator').spec.template.spec.containers[0];
    expect(container.ports).toContainEqual({ name: 'webhook', containerPort: 9443, protocol: 'TCP' });
    expect(container.args).toEqual(
      expect.arrayContaining([
        '--webhook-cert-secret=webapp-webhook-cert',
        // The name the API server checks when it calls the Service.
        '--webhook-cert-hosts=webapp-webhook.webapp-system.svc',
        '--webhook-configuration=webapp-webhook',
      ]),
    );
  });

  test('off by default: no webhook objects', () => {
    const plain = Testing.chart();
    new WebAppOperator(plain, 'webapp');
    expect(Testing.synth(plain).filter((d) => /Webhook|Secret/.test(d.kind))).toEqual([]);
  });
});

describe('webhooks with a certificate from cert-manager', () => {
  const chart = Testing.chart();
  new WebAppOperator(chart, 'webapp', { admissionWebhooks: true, certManager: {} });
  new MemcachedOperator(chart, 'memcached', {
    certManager: { issuer: { name: 'company-ca', kind: 'ClusterIssuer' } },
  });
  const docs = Testing.synth(chart);
  const find = (kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name);

  test('a Certificate for the Service the API server calls, kept in the Secret the reconciler mounts', () => {
    const cert = find('Certificate', 'webapp-serving-cert');
    expect(cert.apiVersion).toBe('cert-manager.io/v1');
    expect(cert.metadata.namespace).toBe('webapp-system');
    const service = find('Service', 'webapp-webhook');
    expect(cert.spec.dnsNames).toContain(`${service.metadata.name}.${service.metadata.namespace}.svc`);
    // Signed by a self-signed Issuer of its own, in the same namespace.
    const issuer = find('Issuer', cert.spec.issuerRef.name);
    expect(issuer).toMatchObject({ metadata: { namespace: 'webapp-system' }, spec: { selfSigned: {} } });
    expect(cert.spec.issuerRef).toMatchObject({ kind: 'Issuer', group: 'cert-manager.io' });
    // The reconciler reads the Secret cert-manager writes, and keeps no certificate of its own.
    const pod = find('Deployment', 'webapp-operator').spec.template.spec;
    const volume = pod.volumes.find((v: any) => v.secret?.secretName === cert.spec.secretName);
    const mount = pod.containers[0].volumeMounts.find((m: any) => m.name === volume.name);
    expect(mount.readOnly).toBe(true);
    expect(pod.containers[0].args).toContain(`--webhook-cert-path=${mount.mountPath}`);
    expect(
      pod.containers[0].args.filter((a: string) => /--webhook-(cert-secret|cert-hosts|configuration)/.test(a)),
    ).toEqual([]);
    expect(docs.filter((d) => d.kind === 'Secret')).toEqual([]);
  });

  test('cainjector keeps the caBundles: every object that calls the webhook names the Certificate', () => {
    const config = find('ValidatingWebhookConfiguration', 'webapp-webhook');
    expect(config.metadata.annotations).toEqual({
      'cert-manager.io/inject-ca-from': 'webapp-system/webapp-serving-cert',
    });
    const crd = find('CustomResourceDefinition', 'memcacheds.cache.example.com');
    const [ns, name] = crd.metadata.annotations['cert-manager.io/inject-ca-from'].split('/');
    expect(find('Certificate', name)?.metadata.namespace).toBe(ns);
    // A CRD that needs no conversion is not annotated.
    expect(find('CustomResourceDefinition', 'webapps.apps.example.com').metadata.annotations).toBeUndefined();
  });

  test('an issuer given is used, and no Issuer is made', () => {
    expect(find('Certificate', 'memcached-serving-cert').spec.issuerRef).toEqual({
      name: 'company-ca',
      kind: 'ClusterIssuer',
      group: 'cert-manager.io',
    });
    expect(docs.filter((d) => d.kind === 'Issuer').map((d) => d.metadata.namespace)).toEqual(['webapp-system']);
  });

  test('the reconciler gets no right to Secrets and none to patch what cainjector keeps', () => {
    const rules = docs.filter((d) => d.kind === 'Role' || d.kind === 'ClusterRole').flatMap((d) => d.rules);
    expect(rules.filter((r: any) => r.resources?.includes('secrets'))).toEqual([]);
    expect(
      rules.filter(
        (r: any) =>
          r.verbs.includes('patch') &&
          r.resources?.some((x: string) => /webhookconfigurations$|^customresourcedefinitions$/.test(x)),
      ),
    ).toEqual([]);
    // Storage migration still reads the converting CRD and trims its storedVersions.
    expect(find('ClusterRole', 'memcached-webhook-configuration-role').rules).toEqual([
      expect.objectContaining({ resources: ['customresourcedefinitions'], verbs: ['get'] }),
      expect.objectContaining({ resources: ['customresourcedefinitions/status'], verbs: ['patch'] }),
    ]);
  });

  test('without a webhook to serve, certManager is refused with what to do', () => {
    expect(() => new WebAppOperator(Testing.chart(), 'webapp', { certManager: {} })).toThrow(
      /certManager is set but the operator serves no webhook; set admissionWebhooks/,
    );
  });
});
