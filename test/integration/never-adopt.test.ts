/**
 * Nothing taken: a resource whose child's name is already used by an object it does not control
 * (made by hand, by another tool, or by another controller) leaves that object exactly as it was,
 * reports `Degraded=True ChildNotOwned` naming it (kstatus: Failed), and records one Warning Event. Checked for
 * every child kind of every controller the kit ships, and for a `constructController` kind, each
 * against the real API server with the operator's own ServiceAccount.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { staticSiteApp } from '../../examples/static-site/app';
import { staticSiteController } from '../../examples/static-site/static-site';
import {
  applicationController,
  type ControllerDeclaration,
  cronTabController,
  databaseController,
  etcdClusterController,
  memcachedController,
  webAppController,
} from '../../constructs';
import { renderChildren } from '../../operator/runtime/children/render';
import {
  createTestNamespace,
  eventually,
  exists,
  getJson,
  getJsonIfExists,
  installDist,
  kubectl,
  kubectlOk,
  nodesRun,
} from '../support/kube';
import { kstatusOf } from '../support/kstatus';
import { ReconcilerProcess, serviceAccountKubeconfig } from '../support/reconciler';

const ROOT = path.resolve(__dirname, '..', '..');
const FOREIGN_LABEL = 'example.com/made-by';

jest.setTimeout(300_000);

interface System {
  readonly operator: string;
  readonly decl: ControllerDeclaration;
  readonly crd: string;
  /** A spec that renders every child kind the controller has. */
  readonly spec: Record<string, unknown>;
  readonly entry?: string;
}

const SYSTEMS: System[] = [
  { operator: 'memcached', decl: memcachedController, crd: 'memcacheds.cache.example.com', spec: { size: 1 } },
  {
    operator: 'etcd',
    decl: etcdClusterController,
    crd: 'etcdclusters.etcd.database.coreos.com',
    spec: { replicas: 1, backup: { schedule: '0 * * * *' } },
  },
  {
    operator: 'crontab',
    decl: cronTabController,
    crd: 'crontabs.stable.example.com',
    spec: { cronSpec: '*/5 * * * *', image: 'busybox' },
  },
  {
    operator: 'webapp',
    decl: applicationController,
    crd: 'applications.app.aiops.org',
    spec: { image: 'nginx:1.27', ingress: { host: 'app.example.com' } },
  },
  {
    operator: 'webapp',
    decl: webAppController,
    crd: 'webapps.apps.example.com',
    spec: { image: 'nginx:1.27', domain: 'web.example.com' },
  },
  {
    operator: 'database',
    decl: databaseController,
    crd: 'databases.database.example.com',
    spec: { type: 'postgresql', version: '16', storage: { size: '1Gi' }, backup: { enabled: true } },
  },
  {
    operator: 'static-site',
    decl: staticSiteController,
    crd: 'staticsites.sites.example.com',
    spec: { pages: { 'index.html': '<h1>Hi</h1>' }, host: 'site.example.com' },
    entry: path.join(ROOT, 'examples', 'static-site', 'main.ts'),
  },
];

/** The API server's defaults, as a render sees them (the CRD applies them on every read). */
function withDefaults(decl: ControllerDeclaration, spec: Record<string, unknown>, ns: string, name: string) {
  const r = kubectl(['create', '--dry-run=server', '-n', ns, '-o', 'json', '-f', '-'], {
    input: JSON.stringify(resource(decl, name, spec)),
  });
  return { ...JSON.parse(r.stdout), metadata: { name, namespace: ns, uid: 'to-be', generation: 1 } };
}

function resource(decl: ControllerDeclaration, name: string, spec: Record<string, unknown>) {
  return { apiVersion: decl.for.apiVersion, kind: decl.for.kind, metadata: { name }, spec };
}

/** Someone else's object of the child's kind and name: the child as rendered, with no owner and a label of theirs. */
function foreignCopy(child: any): any {
  const { ownerReferences: _o, ...metadata } = child.metadata;
  return { ...child, metadata: { ...metadata, labels: { ...metadata.labels, [FOREIGN_LABEL]: 'someone-else' } } };
}

async function startReconciler(system: System, ns: string): Promise<ReconcilerProcess> {
  return ReconcilerProcess.start({
    kubeconfig: serviceAccountKubeconfig({
      namespace: `${system.operator}-system`,
      serviceAccount: `${system.operator}-operator`,
    }),
    args: [`--controllers=${system.decl.name}`, `--namespace=${ns}`],
    name: `never-adopt-${system.decl.name}`,
    entry: system.entry,
  });
}

function degraded(kind: string, ns: string, name: string): any {
  return getJsonIfExists(['get', kind, name, '-n', ns])?.status?.conditions?.find((c: any) => c.type === 'Degraded');
}

function warnings(ns: string, name: string, reason: string): any[] {
  return getJson(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name},reason=${reason}`]).items;
}

const started: ReconcilerProcess[] = [];
beforeAll(() => {
  installDist();
  const app = staticSiteApp(fs.mkdtempSync(path.join(os.tmpdir(), 'static-site-')));
  const objects = app.charts.filter((c) => c.node.id !== 'samples').flatMap((c) => c.toJson());
  kubectlOk(['apply', '--server-side', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  });
  kubectlOk(['wait', '--for', 'condition=established', '--timeout=60s', ...SYSTEMS.map((s) => `crd/${s.crd}`)]);
});
afterAll(async () => {
  await Promise.all(started.map((r) => r.stop()));
});

interface Prepared {
  readonly ns: string;
  readonly probe: any;
  readonly cases: { name: string; child: any; before: any }[];
  readonly reconciler: Promise<ReconcilerProcess>;
}

/**
 * For every system at once (their reconcilers start concurrently): one resource per child,
 * `c<i>`, whose child number i is taken by someone else's object made before the resource.
 */
const prepared = new Map<System, Prepared>();

/**
 * Someone else's object once Kubernetes' own controllers are done with it: a claim is bound when
 * pods run (kwok provisions its volume, the volume controller writes `spec.volumeName`), so its
 * spec is compared from then on.
 */
async function settled(kind: string, name: string, ns: string) {
  return eventually(`${kind} ${name}, settled`, () => {
    const o = getJson(['get', kind, name, '-n', ns]);
    const waitsForBinding = kind === 'PersistentVolumeClaim' && nodesRun && o.status?.phase !== 'Bound';
    return waitsForBinding ? undefined : o;
  });
}

beforeAll(async () => {
  const made = SYSTEMS.map((system) => {
    const ns = createTestNamespace(`adopt-${system.decl.name}`);
    const probe = withDefaults(system.decl, system.spec, ns, 'probe');
    const children = renderChildren(system.decl, probe).map((_c, i) => {
      const name = `c${i}`;
      const child = renderChildren(system.decl, { ...probe, metadata: { ...probe.metadata, name } })[i]!;
      kubectlOk(['create', '-n', ns, '-f', '-'], { input: JSON.stringify(foreignCopy(child)) });
      return { name, child };
    });
    return { system, ns, probe, children };
  });
  for (const { system, ns, probe, children } of made) {
    const cases = [];
    for (const c of children) cases.push({ ...c, before: await settled(c.child.kind!, c.child.metadata.name!, ns) });
    const reconciler = startReconciler(system, ns).then((r) => {
      started.push(r);
      return r;
    });
    prepared.set(system, { ns, probe, cases, reconciler });
  }
  for (const system of SYSTEMS) {
    const { ns, cases } = prepared.get(system)!;
    for (const c of cases)
      kubectlOk(['create', '-n', ns, '-f', '-'], { input: JSON.stringify(resource(system.decl, c.name, system.spec)) });
  }
});

describe.each(SYSTEMS.map((s) => [s.decl.name, s] as const))(
  '%s never adopts an object it did not make',
  (_name, system) => {
    test('for each child kind: the object is left as it was, Degraded ChildNotOwned names it, one Warning Event', async () => {
      const { ns, probe, cases, reconciler } = prepared.get(system)!;
      const kindName = system.decl.for.kind.toLowerCase();
      expect(cases.length).toBeGreaterThan(0);
      await reconciler;
      let lastSeen = 0;
      for (const c of cases) {
        const what = `${c.child.kind} ${c.child.metadata.name}`;
        const condition = await eventually(
          `${kindName} ${c.name} to report ${what} not owned`,
          () => {
            const d = degraded(kindName, ns, c.name);
            return d?.reason === 'ChildNotOwned' ? d : undefined;
          },
          60_000,
        );
        lastSeen = Math.max(lastSeen, Date.parse(condition.lastTransitionTime));
        expect(condition.status).toBe('True');
        expect(condition.message).toContain(what);
        expect(condition.message).toContain('has no controller');
        // What Helm 4's --wait, Flux and kpt make of it: waiting will not fix it.
        expect(kstatusOf(kindName, c.name, ns)).toBe('Failed');
        // Nothing of it runs: not Available, whatever the kind makes of the children it has (none).
        expect(
          getJson(['get', kindName, c.name, '-n', ns]).status.conditions.find((x: any) => x.type === 'Available'),
        ).toMatchObject({ status: 'False', reason: 'ChildNotOwned' });
      }
      // Let resyncs and child events come and go for 3 s after it turned Degraded (its reconciler
      // started with all the others'): nothing changes, no second Event.
      await new Promise((r) => setTimeout(r, Math.max(0, lastSeen + 4_000 - Date.now())));
      for (const c of cases) {
        const now = getJson(['get', c.child.kind!, c.child.metadata.name!, '-n', ns, '--show-managed-fields']);
        expect(now.metadata.ownerReferences).toBeUndefined();
        expect(now.metadata.labels[FOREIGN_LABEL]).toBe('someone-else');
        expect(now.metadata.managedFields.map((m: any) => m.manager)).not.toContain('cdk8s-operator-kit');
        expect(now.spec).toEqual(c.before.spec);
        const events = warnings(ns, c.name, 'ChildNotOwned');
        expect(events).toHaveLength(1);
        expect(events[0].type).toBe('Warning');
        expect(events[0].count ?? 1).toBe(1);
        // None of the resource's other children were made either.
        for (const other of renderChildren(system.decl, { ...probe, metadata: { ...probe.metadata, name: c.name } })) {
          if (other.kind === c.child.kind && other.metadata.name === c.child.metadata.name) continue;
          expect(exists(['get', other.kind!, other.metadata.name!, '-n', ns])).toBe(false);
        }
      }
      expect((await (await reconciler).stop()).code).toBe(0);
    });
  },
);

describe("the issue's cases, as a user would meet them", () => {
  test('a Memcached named like an existing Deployment leaves it alone; once that is deleted, it makes its own', async () => {
    const ns = createTestNamespace('adopt-payments');
    kubectlOk([
      'create',
      'deployment',
      'payments',
      '-n',
      ns,
      '--image=registry.example.com/payments:7',
      '--replicas=4',
    ]);
    const reconciler = await startReconciler(SYSTEMS[0]!, ns);
    started.push(reconciler);
    kubectlOk(['create', '-n', ns, '-f', '-'], {
      input: JSON.stringify(resource(memcachedController, 'payments', { size: 1 })),
    });
    const condition = await eventually('Degraded ChildNotOwned', () => {
      const d = degraded('memcached', ns, 'payments');
      return d?.reason === 'ChildNotOwned' ? d : undefined;
    });
    expect(condition.message).toContain('Deployment payments already exists');
    const theirs = getJson(['get', 'deployment', 'payments', '-n', ns]);
    expect(theirs.spec.replicas).toBe(4);
    expect(theirs.spec.template.spec.containers[0].image).toBe('registry.example.com/payments:7');
    expect(theirs.metadata.ownerReferences).toBeUndefined();

    // Deleting the Memcached deletes nothing of theirs.
    kubectlOk(['delete', 'memcached', 'payments', '-n', ns, '--wait=true']);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(getJson(['get', 'deployment', 'payments', '-n', ns]).metadata.uid).toBe(theirs.metadata.uid);

    // With their Deployment gone, a Memcached of that name makes its own.
    kubectlOk(['create', '-n', ns, '-f', '-'], {
      input: JSON.stringify(resource(memcachedController, 'payments', { size: 1 })),
    });
    await eventually('Degraded ChildNotOwned again', () =>
      degraded('memcached', ns, 'payments')?.reason === 'ChildNotOwned' ? true : undefined,
    );
    kubectlOk(['delete', 'deployment', 'payments', '-n', ns, '--wait=true']);
    const mc = getJson(['get', 'memcached', 'payments', '-n', ns]);
    const ours = await eventually('its own Deployment', () => {
      const d = getJsonIfExists(['get', 'deployment', 'payments', '-n', ns]);
      return d?.metadata.ownerReferences?.[0]?.uid === mc.metadata.uid ? d : undefined;
    });
    expect(ours.spec.template.spec.containers[0].image).toBe('memcached:1.6');
    await eventually('Degraded to clear', () =>
      degraded('memcached', ns, 'payments')?.status === 'False' ? true : undefined,
    );
  });

  test('an Application named like an existing Service keeps its selector and ports', async () => {
    const ns = createTestNamespace('adopt-billing');
    kubectlOk(['create', 'service', 'clusterip', 'billing', '-n', ns, '--tcp=9000:9001']);
    const before = getJson(['get', 'service', 'billing', '-n', ns]);
    const reconciler = await startReconciler(SYSTEMS[3]!, ns);
    started.push(reconciler);
    kubectlOk(['create', '-n', ns, '-f', '-'], {
      input: JSON.stringify(resource(applicationController, 'billing', { image: 'nginx:1.27' })),
    });
    await eventually('Degraded ChildNotOwned', () =>
      degraded('application', ns, 'billing')?.reason === 'ChildNotOwned' ? true : undefined,
    );
    const after = getJson(['get', 'service', 'billing', '-n', ns]);
    expect(after.spec.selector).toEqual(before.spec.selector);
    expect(after.spec.ports).toEqual(before.spec.ports);
    expect(after.metadata.ownerReferences).toBeUndefined();
  });
});
