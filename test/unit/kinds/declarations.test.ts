/**
 * For every controller of the kit: what its construct renders is what it declares it owns, and
 * the RBAC synthesized from the declaration covers applying (and pruning) exactly that. A kind
 * rendered but not owned would fail at run time; this catches it in a second.
 */
import { customResourceType, DEFAULT_IMAGE, rulesForControllers } from '../../../constructs';
import { KIT_CONTROLLERS } from '../../../constructs/kit-controllers';
import { renderChildren } from '../../../operator/runtime/children/render';

const meta = { name: 'x', namespace: 'ns', uid: 'u', generation: 1 };
/** Resources taking every optional branch of their construct (defaults applied, as the API server would). */
const resources: Record<string, { spec: object }[]> = {
  memcached: [{ spec: { size: 3, image: 'memcached:1.6', containerPort: 11211 } }],
  etcdcluster: [
    {
      spec: {
        replicas: 3,
        version: '3.5.21',
        storage: '1Gi',
        storageClassName: 'fast',
        resources: { limits: { memory: '1Gi' } },
      },
    },
  ],
  crontab: [{ spec: { cronSpec: '* * * * *', image: 'busybox', replicas: 2 } }],
  application: [
    {
      spec: {
        image: 'nginx',
        replicas: 1,
        port: 8080,
        service: { type: 'ClusterIP' },
        ingress: { host: 'a.example.com', className: 'nginx', path: '/', tlsSecretName: 'tls' },
      },
    },
    { spec: { image: 'nginx', replicas: 1, port: 8080, service: { type: 'ClusterIP' } } },
  ],
  webapp: [{ spec: { replicas: 1, image: 'nginx', port: 80, domain: 'w.example.com' } }],
  database: [
    {
      spec: {
        type: 'postgresql',
        version: '16',
        storage: { size: '1Gi' },
        backup: { enabled: true, schedule: '0 2 * * *' },
        tls: { enabled: true, required: false },
        deletionPolicy: 'Delete',
      },
    },
    {
      spec: {
        type: 'mysql',
        version: '8.4',
        storage: { size: '1Gi' },
        backup: { enabled: false, schedule: '0 2 * * *' },
        deletionPolicy: 'Retain',
      },
    },
  ],
};

describe.each(KIT_CONTROLLERS.map((c) => [c.name, c] as const))('controller %s', (name, controller) => {
  const type = customResourceType(controller.for);
  const rendered = resources[name]!.flatMap((r) =>
    renderChildren(controller, { apiVersion: `${type.group}/${type.version}`, kind: type.kind, metadata: meta, ...r }),
  );

  test("names the kit's image, which an Operator given no image runs", () => {
    expect(controller.image).toBe(DEFAULT_IMAGE);
  });

  test('has test resources, and renders something for them', () => {
    expect(rendered.length).toBeGreaterThan(0);
  });

  test('renders only kinds it owns', () => {
    const owned = new Set((controller.owns ?? []).map((t) => `${t.group ? `${t.group}/` : ''}${t.version}/${t.kind}`));
    for (const o of rendered) expect(owned).toContain(`${o.apiVersion}/${o.kind}`);
  });

  test('its RBAC lets it apply what it renders, and delete only what it prunes (and a StatefulSet made again with larger claims, a claim discarded with its pod where the kind says so)', () => {
    const rules = rulesForControllers([controller]).namespaced;
    const verbsOn = (group: string, resource: string) =>
      new Set(
        rules.filter((r) => r.apiGroups.includes(group) && r.resources.includes(resource)).flatMap((r) => r.verbs),
      );
    for (const t of controller.owns ?? []) {
      const verbs = verbsOn(t.group, t.resource);
      for (const v of ['get', 'list', 'watch', 'create', 'patch'])
        expect([t.kind, v, verbs.has(v)]).toEqual([t.kind, v, true]);
      // A StatefulSet whose claims grow is deleted with its pods kept, and made again (storage-growth.ts);
      // a claim only by a kind whose restarted pods may discard theirs (pod-restarts.ts).
      const deletes =
        (controller.deletes ?? []).includes(t) ||
        (t.kind === 'StatefulSet' && t.group === 'apps') ||
        (t.kind === 'PersistentVolumeClaim' && controller.discardsClaims === true);
      expect([t.kind, 'delete', verbs.has('delete')]).toEqual([t.kind, 'delete', deletes]);
    }
  });

  test('patches pods only where the kind labels its pods (pod-labels.ts)', () => {
    const rules = rulesForControllers([controller]).namespaced;
    const patchesPods = rules.some(
      (r) => r.apiGroups.includes('') && r.resources.includes('pods') && r.verbs.includes('patch'),
    );
    expect(patchesPods).toBe(controller.labelsPods === true);
  });
});
