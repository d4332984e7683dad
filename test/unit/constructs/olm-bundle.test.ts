/**
 * An operator as an OLM bundle (constructs/olm): what the CSV is made of — the Deployment as OLM
 * runs it, the rules its ServiceAccount is bound to, the CRDs described from their schemas — and
 * what is left to OLM (namespace, account, bindings, webhook Service and certificate).
 */
import { parse } from 'yaml';
import { cronTabController, databaseController, memcachedController } from '../../../constructs';
import { olmBundle } from '../../../constructs/olm/bundle';
import { one, synthProject } from '../../support/synth';

const bundleOf = (name: string, controllers: any[], extra: object = {}) =>
  olmBundle({ operator: { name, controllers }, ...extra });
const csvIn = (files: Record<string, string>, name: string): any =>
  parse(files[`manifests/${name}.clusterserviceversion.yaml`] ?? '');

describe('olmBundle', () => {
  test('the files operator-sdk writes: the CSV, each CRD, the metrics Service; nothing OLM makes itself', () => {
    const files = bundleOf('crontab', [cronTabController]);
    expect(Object.keys(files).sort()).toEqual([
      'bundle.Dockerfile',
      'manifests/crontab-crontab-metrics-reader_rbac.authorization.k8s.io_v1_clusterrole.yaml',
      'manifests/crontab-crontab-metrics_v1_service.yaml',
      'manifests/crontab.clusterserviceversion.yaml',
      'manifests/crontabs.stable.example.com.yaml',
      'metadata/annotations.yaml',
    ]);
    expect(parse(files['manifests/crontab-crontab-metrics_v1_service.yaml'] ?? '').metadata.namespace).toBeUndefined();
    expect(parse(files['metadata/annotations.yaml'] ?? '').annotations).toMatchObject({
      'operators.operatorframework.io.bundle.package.v1': 'crontab',
      'operators.operatorframework.io.bundle.channels.v1': 'stable',
      'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
    });
    expect(files['bundle.Dockerfile']).toContain('LABEL operators.operatorframework.io.bundle.package.v1=crontab');
  });

  test("the install strategy: the synthesized Deployment, its ServiceAccount's cluster rules and its Lease rule", () => {
    const csv = csvIn(bundleOf('crontab', [cronTabController]), 'crontab');
    const strategy = csv.spec.install.spec;
    const objects = synthProject().objects;
    const role = one(objects, 'ClusterRole', 'crontab-manager-role');
    expect(strategy.clusterPermissions).toHaveLength(1);
    expect(strategy.clusterPermissions[0].serviceAccountName).toBe('crontab-operator');
    expect(strategy.clusterPermissions[0].rules).toEqual(expect.arrayContaining(role.rules));
    expect(strategy.permissions[0].rules).toEqual([
      expect.objectContaining({ apiGroups: ['coordination.k8s.io'], resources: ['leases'] }),
    ]);
    const [deployment] = strategy.deployments;
    expect(deployment.name).toBe('crontab-operator');
    const args: string[] = deployment.spec.template.spec.containers[0].args;
    // The Lease in the namespace OLM installs into (its pod's), not one fixed at synth time.
    expect(args).toContain('--leader-elect');
    expect(args.filter((a) => a.startsWith('--leader-election-namespace'))).toEqual([]);
    // The namespaces OLM targets, from the pod template's annotation OLM writes: every install mode.
    expect(args).toContain('--namespaces=$(WATCH_NAMESPACE)');
    expect(deployment.spec.template.spec.containers[0].env).toContainEqual({
      name: 'WATCH_NAMESPACE',
      valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } },
    });
    expect(csv.spec.installModes.filter((m: any) => m.supported).map((m: any) => m.type)).toEqual([
      'OwnNamespace',
      'SingleNamespace',
      'MultiNamespace',
      'AllNamespaces',
    ]);
  });

  test('owned CRDs: one per served version, described from the schema, conditions marked as such', () => {
    const csv = csvIn(bundleOf('database', [databaseController]), 'database');
    const [owned] = csv.spec.customresourcedefinitions.owned;
    expect(owned).toMatchObject({ name: 'databases.database.example.com', version: 'v1alpha1', kind: 'Database' });
    expect(owned.specDescriptors.map((d: any) => d.path)).toEqual(
      expect.arrayContaining(['type', 'version', 'storage']),
    );
    expect(owned.statusDescriptors.find((d: any) => d.path === 'conditions')['x-descriptors']).toEqual([
      'urn:alm:descriptor:io.kubernetes.conditions',
    ]);
  });

  test('a conversion webhook is OLM’s to serve: a webhookdefinition, the certificate where OLM mounts it, no Service or Secret of ours', () => {
    const files = bundleOf('memcached', [memcachedController], { examples: [{ kind: 'Memcached' }] });
    const csv = csvIn(files, 'memcached');
    expect(csv.spec.webhookdefinitions).toEqual([
      expect.objectContaining({
        type: 'ConversionWebhook',
        deploymentName: 'memcached-operator',
        targetPort: 9443,
        webhookPath: '/convert',
        conversionCRDs: ['memcacheds.cache.example.com'],
      }),
    ]);
    const args: string[] = csv.spec.install.spec.deployments[0].spec.template.spec.containers[0].args;
    expect(args).toContain('--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs');
    expect(args.filter((a) => /^--webhook-cert-(secret|hosts)=/.test(a))).toEqual([]);
    expect(Object.keys(files).filter((f) => /webhook|secret/.test(f))).toEqual([]);
    expect(JSON.parse(csv.metadata.annotations['alm-examples'])).toEqual([{ kind: 'Memcached' }]);
    // OLM serves conversion webhooks only for operators of every namespace.
    expect(csv.spec.installModes.filter((m: any) => m.supported).map((m: any) => m.type)).toEqual(['AllNamespaces']);
  });
});
