/**
 * An operator scoped to the namespaces it serves (`watchNamespaces`): a Role in each, nothing
 * namespaced left cluster-wide, the reconciler told which to watch, and its admission hooks
 * asked only about them. That the API server's authorizer agrees is the integration test's
 * (test/integration/watch-namespaces.test.ts).
 */
import { Testing } from 'cdk8s';
import {
  DatabaseOperator,
  MemcachedOperator,
  operatorHelmChart,
  type OperatorOptions,
  WebAppOperator,
} from '../../../constructs';
import { memcachedController } from '../../../constructs';
import { find, type K8sObject, one, parseYaml } from '../../support/synth';

function memcached(options: OperatorOptions): K8sObject[] {
  const chart = Testing.chart();
  new MemcachedOperator(chart, 'memcached', options);
  return Testing.synth(chart) as K8sObject[];
}

const argsOf = (objects: K8sObject[]) =>
  one(objects, 'Deployment', 'memcached-operator').spec.template.spec.containers[0].args as string[];

describe('watchNamespaces', () => {
  const objects = memcached({ watchNamespaces: ['apps', 'web'] });
  const namespacedRules = (role: K8sObject) => role.rules as { apiGroups: string[]; resources: string[] }[];

  test('a Role and RoleBinding in each namespace, binding the operator’s ServiceAccount to its rights on the kinds and children', () => {
    const roles = find(objects, 'Role', 'memcached-manager-role');
    expect(roles.map((r) => r.metadata.namespace).sort()).toEqual(['apps', 'web']);
    const resources = namespacedRules(roles[0]!).flatMap((r) => r.resources);
    expect(resources).toEqual(expect.arrayContaining(['memcacheds', 'deployments']));
    const bindings = find(objects, 'RoleBinding', 'memcached-manager-rolebinding');
    expect(bindings.map((b) => b.metadata.namespace).sort()).toEqual(['apps', 'web']);
    for (const b of bindings) {
      expect(b.roleRef).toEqual({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: 'memcached-manager-role',
      });
      expect(b.subjects).toEqual([
        { kind: 'ServiceAccount', name: 'memcached-operator', namespace: 'memcached-system' },
      ]);
    }
  });

  test('no right on a namespaced kind is left cluster-wide', () => {
    const clusterRole = one(objects, 'ClusterRole', 'memcached-manager-role');
    const resources = namespacedRules(clusterRole).flatMap((r) => r.resources);
    for (const r of ['memcacheds', 'deployments', 'pods', 'events']) expect(resources).not.toContain(r);
  });

  test('the reconciler watches those namespaces, and the admission hooks review only them', () => {
    expect(argsOf(objects)).toContain('--namespaces=apps,web');
    expect(argsOf(objects).filter((a) => a.startsWith('--namespace='))).toEqual([]);
    // The WebApp operator's kinds have admission hooks.
    const chart = Testing.chart();
    new WebAppOperator(chart, 'webapp', { watchNamespaces: ['apps', 'web'], admissionWebhooks: true });
    const webapp = Testing.synth(chart) as K8sObject[];
    const hooks = [
      ...find(webapp, 'ValidatingWebhookConfiguration'),
      ...find(webapp, 'MutatingWebhookConfiguration'),
    ].flatMap((c) => c.webhooks as { namespaceSelector: unknown }[]);
    expect(hooks.length).toBeGreaterThan(0);
    for (const h of hooks) {
      expect(h.namespaceSelector).toEqual({
        matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['apps', 'web'] }],
      });
    }
  });

  test('one namespace in the list is the same operator as watchNamespace', () => {
    expect(memcached({ watchNamespaces: ['apps'] })).toEqual(memcached({ watchNamespace: 'apps' }));
    expect(argsOf(memcached({ watchNamespaces: ['apps'] }))).toContain('--namespace=apps');
  });

  test('the Database operator may create its Secrets in its namespaces only', () => {
    const chart = Testing.chart();
    new DatabaseOperator(chart, 'database', { watchNamespaces: ['team-a', 'team-b'] });
    const all = Testing.synth(chart) as K8sObject[];
    const secretRules = (o: K8sObject) =>
      (o.rules as { resources?: string[] }[]).filter((r) => r.resources?.includes('secrets'));
    expect(find(all, 'ClusterRole').flatMap(secretRules)).toEqual([]);
    expect(find(all, 'Role', 'database-manager-role').map((r) => secretRules(r).length)).toEqual([1, 1]);
  });

  test.each([
    [{ watchNamespace: 'a', watchNamespaces: ['b'] }, /give watchNamespace or watchNamespaces, not both/],
    [{ watchNamespaces: [] }, /watchNamespaces is empty/],
    [{ watchNamespaces: ['a', 'a'] }, /watchNamespaces lists "a" twice/],
    [{ watchNamespaces: ['a', 'Team_B'] }, /watchNamespaces "Team_B" must be a lower-case DNS label/],
  ])('refused with the field named: %j', (options, message) => {
    expect(() => memcached(options as OperatorOptions)).toThrow(message);
  });

  test("a Helm chart's watchNamespaces value is the operator's list: one namespace, or several", () => {
    const valuesOf = (props: { watchNamespace?: string; watchNamespaces?: string[] }) =>
      parseYaml(
        operatorHelmChart({ operator: { name: 'm', controllers: [memcachedController], ...props } })['values.yaml'],
      )[0]!;
    expect(valuesOf({ watchNamespaces: ['apps'] }).watchNamespaces).toEqual(['apps']);
    expect(valuesOf({ watchNamespace: 'apps' }).watchNamespaces).toEqual(['apps']);
    expect(valuesOf({ watchNamespaces: ['a', 'b'] }).watchNamespaces).toEqual(['a', 'b']);
    expect(valuesOf({}).watchNamespaces).toEqual([]);
  });
});
