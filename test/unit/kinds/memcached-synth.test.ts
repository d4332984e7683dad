import * as fs from 'node:fs';
import * as path from 'node:path';
import { memcachedController, memcachedKind, rulesForControllers } from '../../../constructs';
import { metricsAuthRules } from '../../../constructs/core/rbac';
import { structuralProblems } from '../../../constructs/core/structural';
import { validateBuiltin, isBuiltin } from '../../support/builtin-validator';
import { CrdValidator } from '../../support/crd-validator';
import { invalidMemcachedSpecs, memcachedWithSpec } from '../../support/memcached-cases';
import { one, parseYaml, podSpecsOf, synthProject } from '../../support/synth';

const SEEDS = path.join(__dirname, '..', '..', 'fixtures', 'seeds');
const seedFiles = fs.readdirSync(SEEDS).filter((f) => /memcached.*\.yaml$/.test(f));

const result = synthProject();
// This file is about the Memcached operator's charts and sample.
const files = Object.fromEntries(
  Object.entries(result.files).filter(([f]) => /^\d{4}-memcached|samples\/memcached/.test(f)),
);
const objects = Object.keys(files)
  .filter((f) => !f.startsWith('samples/'))
  .sort()
  .flatMap((f) => parseYaml(files[f]));
const samples = parseYaml(files['samples/memcached-sample.k8s.yaml']);
const crd = one(objects, 'CustomResourceDefinition', 'memcacheds.cache.example.com');

describe('synthesized Memcached operator', () => {
  test('matches the snapshot', () => {
    expect(files).toMatchSnapshot();
  });

  test("writes every operator's cluster-scoped chart before its namespaced chart, samples apart", () => {
    const top = Object.keys(result.files)
      .filter((f) => !f.includes('/'))
      .sort();
    const operators = top.filter((f) => !f.includes('-cluster.')).map((f) => /^(\d{4})-(.+)\.k8s\.yaml$/.exec(f)!);
    expect(operators.map((m) => m[2])).toEqual(expect.arrayContaining(['memcached', 'etcd', 'crontab']));
    for (const [, index, name] of operators) {
      const cluster = top.find((f) => f.endsWith(`-${name}-cluster.k8s.yaml`));
      expect({ name, cluster: cluster !== undefined && cluster.slice(0, 4) < index! }).toEqual({ name, cluster: true });
    }
    expect(Object.keys(result.files)).toContain('samples/memcached-sample.k8s.yaml');
    // Samples never ride with the operators: a CR cannot be applied before its CRD is established.
    for (const f of top)
      expect(parseYaml(result.files[f]).map((o) => o.apiVersion.split('/')[0])).not.toContain('cache.example.com');
  });

  test('cluster-scoped objects carry no namespace; namespaced ones carry the operator namespace', () => {
    const clusterScoped = new Set(['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding']);
    for (const o of objects) {
      if (clusterScoped.has(o.kind))
        expect({ kind: o.kind, ns: o.metadata.namespace }).toEqual({ kind: o.kind, ns: undefined });
      else expect({ kind: o.kind, ns: o.metadata.namespace }).toEqual({ kind: o.kind, ns: 'memcached-system' });
    }
  });

  test('the CRD names, versions and scope follow the seeds', () => {
    expect(crd.spec.group).toBe('cache.example.com');
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toMatchObject({
      kind: 'Memcached',
      plural: 'memcacheds',
      singular: 'memcached',
      shortNames: ['mc'],
      categories: ['all'],
    });
    expect(crd.spec.versions.map((v: any) => [v.name, v.served, v.storage])).toEqual([
      ['v1alpha1', true, false],
      ['v1', true, true],
    ]);
    // The versions differ in one field (v1alpha1 maxMemoryMB, v1 memory), so the API server
    // converts through the operator's webhook Service.
    const fields = (v: any) => Object.keys(v.schema.openAPIV3Schema.properties.spec.properties).sort();
    expect(fields(crd.spec.versions[0])).toEqual(['containerPort', 'image', 'maxMemoryMB', 'size']);
    expect(fields(crd.spec.versions[1])).toEqual(['containerPort', 'image', 'memory', 'size']);
    expect(crd.spec.conversion).toEqual({
      strategy: 'Webhook',
      webhook: {
        clientConfig: {
          service: { name: 'memcached-webhook', namespace: 'memcached-system', path: '/convert', port: 443 },
        },
        conversionReviewVersions: ['v1'],
      },
    });
    const service = one(objects, 'Service', 'memcached-webhook');
    expect(service.spec.ports).toEqual([{ name: 'webhook', port: 443, targetPort: 'webhook', protocol: 'TCP' }]);
    const args = one(objects, 'Deployment', 'memcached-operator').spec.template.spec.containers[0].args;
    expect(args).toEqual(
      expect.arrayContaining([
        '--webhook-cert-secret=memcached-webhook-cert',
        '--webhook-cert-hosts=memcached-webhook.memcached-system.svc',
      ]),
    );
    // No admission webhooks were asked for: no configuration to keep.
    expect(args.filter((a: string) => a.startsWith('--webhook-configuration'))).toEqual([]);
  });

  test('the CRD schema is structural: every node typed', () => {
    for (const v of crd.spec.versions) {
      expect(structuralProblems(v.schema.openAPIV3Schema)).toEqual([]);
      // An independent walk over the output: no node without a type.
      const untyped: string[] = [];
      const walk = (s: any, at: string) => {
        if (!s.type && !s['x-kubernetes-int-or-string'] && !s['x-kubernetes-preserve-unknown-fields']) untyped.push(at);
        Object.entries(s.properties ?? {}).forEach(([k, c]) => {
          walk(c, `${at}.${k}`);
        });
        if (s.items) walk(s.items, `${at}[]`);
      };
      walk(v.schema.openAPIV3Schema, '');
      expect(untyped).toEqual([]);
    }
  });

  test("the spec schema has the seeds' fields, bounds and defaults, with descriptions", () => {
    const spec = crd.spec.versions[1].schema.openAPIV3Schema.properties.spec;
    expect(spec.required).toEqual(['size']);
    expect(spec.properties.size).toMatchObject({ type: 'integer', minimum: 1, maximum: 10 });
    expect(spec.properties.image).toMatchObject({ type: 'string', default: 'memcached:1.6' });
    expect(spec.properties.containerPort).toMatchObject({ type: 'integer', default: 11211 });
    for (const [name, field] of Object.entries<any>(spec.properties)) {
      expect({ name, hasDescription: typeof field.description === 'string' && field.description.length > 10 }).toEqual({
        name,
        hasDescription: true,
      });
    }
    const status = crd.spec.versions[1].schema.openAPIV3Schema.properties.status;
    expect(status.properties.nodes).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(status.properties.conditions['x-kubernetes-list-type']).toBe('map');
    expect(status.properties.conditions.items.required).toEqual([
      'type',
      'status',
      'lastTransitionTime',
      'reason',
      'message',
    ]);
  });

  test('status and scale subresources, printer columns', () => {
    for (const v of crd.spec.versions) {
      expect(v.subresources).toEqual({
        status: {},
        scale: {
          specReplicasPath: '.spec.size',
          statusReplicasPath: '.status.readyReplicas',
          // The pods' selector, written by the runtime, for HorizontalPodAutoscalers.
          labelSelectorPath: '.status.selector',
        },
      });
      expect(v.additionalPrinterColumns.map((c: any) => [c.name, c.type, c.jsonPath])).toEqual([
        ['Size', 'integer', '.spec.size'],
        ['Ready', 'integer', '.status.readyReplicas'],
        ['Age', 'date', '.metadata.creationTimestamp'],
      ]);
    }
  });

  test('RBAC grants exactly what the memcached controller needs, never a wildcard', () => {
    const role = one(objects, 'ClusterRole', 'memcached-manager-role');
    const grants = role.rules
      .flatMap((r: any) => r.resources.map((res: string) => `${r.apiGroups.join()}/${res}: ${r.verbs.join(',')}`))
      .sort();
    expect(grants).toEqual(
      [
        '/pods: get,list,watch',
        'apps/deployments: get,list,watch,create,update,patch',
        // For the secure /metrics endpoint: who is scraping, and may they.
        'authentication.k8s.io/tokenreviews: create',
        'authorization.k8s.io/subjectaccessreviews: create',
        'cache.example.com/memcacheds/finalizers: update',
        'cache.example.com/memcacheds/status: get,update,patch',
        // patch: rewriting each object once in the new storage version (storage migration).
        'cache.example.com/memcacheds: get,list,watch,patch',
        'events.k8s.io/events: create,patch',
      ].sort(),
    );
    for (const r of objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role').flatMap((o) => o.rules)) {
      expect([...(r.apiGroups ?? []), ...(r.resources ?? []), ...(r.nonResourceURLs ?? []), ...r.verbs]).not.toContain(
        '*',
      );
    }
    // No access to Secrets, and no delete anywhere: garbage collection removes children.
    expect(JSON.stringify(role.rules)).not.toMatch(/secrets|delete/);
    const leader = one(objects, 'Role', 'memcached-leader-election-role');
    expect(leader.rules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
    ]);
  });

  test("the bindings give those roles to the operator's ServiceAccount", () => {
    const subject = { kind: 'ServiceAccount', name: 'memcached-operator', namespace: 'memcached-system' };
    expect(one(objects, 'ClusterRoleBinding', 'memcached-manager-rolebinding')).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'memcached-manager-role' },
      subjects: [subject],
    });
    expect(one(objects, 'RoleBinding', 'memcached-leader-election-rolebinding')).toMatchObject({
      roleRef: { kind: 'Role', name: 'memcached-leader-election-role' },
      subjects: [subject],
    });
  });

  test('every pod spec meets the restricted Pod Security Standard and mounts its token', () => {
    const specs = podSpecsOf(objects);
    expect(specs.map((s) => s.owner)).toEqual(['Deployment/memcached-operator']);
    for (const { spec } of specs) {
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(spec.automountServiceAccountToken).toBe(true);
      for (const c of spec.containers) {
        expect(c.securityContext).toEqual(
          expect.objectContaining({
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
            readOnlyRootFilesystem: true,
            runAsNonRoot: true,
          }),
        );
        expect(c.resources.requests).toBeDefined();
        expect(c.resources.limits).toBeDefined();
      }
    }
    expect(
      (one(objects, 'Namespace', 'memcached-system').metadata.labels as Record<string, string>)[
        'pod-security.kubernetes.io/enforce'
      ],
    ).toBe('restricted');
  });

  test('the reconciler Deployment: args select the controller, probes, metrics port and Service', () => {
    const dep = one(objects, 'Deployment', 'memcached-operator');
    const c = dep.spec.template.spec.containers[0];
    expect(c.args).toEqual(
      expect.arrayContaining([
        '--controllers=memcached',
        '--leader-elect',
        '--leader-election-id=memcached-operator-leader',
        '--metrics-bind-address=:8080',
        '--health-probe-bind-address=:8081',
      ]),
    );
    // A small young generation: what the bench measured the memory figures with.
    expect(c.env).toContainEqual({ name: 'NODE_OPTIONS', value: '--max-semi-space-size=2' });
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
    expect(c.ports).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'metrics', containerPort: 8080 })]),
    );
    expect(dep.spec.template.spec.serviceAccountName).toBe('memcached-operator');
    const svc = one(objects, 'Service', 'memcached-metrics');
    expect(svc.spec.selector).toEqual(dep.spec.selector.matchLabels);
    // Every selector label is on the pod template, so the Deployment is valid.
    expect(dep.spec.template.metadata.labels).toMatchObject(dep.spec.selector.matchLabels);
  });

  test('every object carries the standard app.kubernetes.io labels', () => {
    for (const o of objects) {
      expect(Object.keys(o.metadata.labels ?? {})).toEqual(
        expect.arrayContaining(['app.kubernetes.io/part-of', 'app.kubernetes.io/managed-by']),
      );
    }
  });

  test('every built-in object validates against the Kubernetes OpenAPI schema', () => {
    const builtins = objects.filter((o) => isBuiltin(o.apiVersion));
    expect(builtins.length).toBe(objects.length);
    for (const o of builtins)
      expect(() => {
        validateBuiltin(o);
      }).not.toThrow();
    // The validator can fail: a broken Deployment is caught.
    const broken = structuredClone(one(objects, 'Deployment', 'memcached-operator'));
    broken.spec.replicas = 'three';
    expect(() => {
      validateBuiltin(broken);
    }).toThrow();
  });

  test('/metrics is secure by default: HTTPS Service port, a metrics-reader ClusterRole to bind to Prometheus', () => {
    expect(one(objects, 'ClusterRole', 'memcached-metrics-reader').rules).toEqual([
      { nonResourceURLs: ['/metrics'], verbs: ['get'] },
    ]);
    expect(one(objects, 'Service', 'memcached-metrics').spec.ports).toEqual([
      { name: 'https', port: 8080, targetPort: 'metrics', protocol: 'TCP' },
    ]);
    expect(one(objects, 'Deployment', 'memcached-operator').spec.template.spec.containers[0].args).not.toContain(
      '--metrics-secure=false',
    );
  });

  test('the declaration and the output agree', () => {
    const rules = rulesForControllers([memcachedController]);
    expect(one(objects, 'ClusterRole', 'memcached-manager-role').rules).toEqual([
      ...rules.namespaced,
      ...metricsAuthRules(),
    ]);
    expect(memcachedKind.crdName).toBe(crd.metadata.name);
  });
});

describe('sample Memcached resources', () => {
  const validator = new CrdValidator(crd);

  test('the synthesized sample is a size-3 Memcached that validates against its CRD', () => {
    expect(samples).toHaveLength(1);
    expect(samples[0]).toMatchObject({ apiVersion: 'cache.example.com/v1', kind: 'Memcached', spec: { size: 3 } });
    expect(validator.validate(samples[0])).toEqual([]);
  });

  test('defaults fill in image and containerPort', () => {
    const cr = {
      apiVersion: 'cache.example.com/v1alpha1',
      kind: 'Memcached',
      metadata: { name: 'x' },
      spec: { size: 2 },
    };
    expect(validator.validate(cr)).toEqual([]);
  });

  test.each(invalidMemcachedSpecs)('rejects %s, naming the field', (_what, spec, field) => {
    const errors = validator.validate(memcachedWithSpec('bad', spec));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.join('\n')).toContain(field);
  });

  test.each(seedFiles)('the seed sample %s validates verbatim', (file) => {
    const docs = parseYaml(fs.readFileSync(path.join(SEEDS, file), 'utf8'));
    expect(docs).toHaveLength(1);
    expect(validator.validate(docs[0])).toEqual([]);
  });

  test('rejects a Memcached without spec, and an unserved version', () => {
    expect(
      validator.validate({ apiVersion: 'cache.example.com/v1', kind: 'Memcached', metadata: { name: 'x' } }).join(),
    ).toContain('spec: Required value');
    expect(
      validator
        .validate({ apiVersion: 'cache.example.com/v2', kind: 'Memcached', metadata: { name: 'x' }, spec: { size: 1 } })
        .join(),
    ).toContain('apiVersion');
  });
});
