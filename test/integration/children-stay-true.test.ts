/**
 * Children stay what the spec says: a field the desired object no longer has is removed from the
 * child (the change check compares with what our field manager owns, not "desired ⊆ live"), and
 * a change of Database deletionPolicy moves ownership so that Retain really keeps the data.
 */
import { auditMark, writesBy } from '../support/audit';
import { eventually, getJson, kubectl, kubectlOk } from '../support/kube';
import { type OperatorUnderTest, startOperatorUnderTest } from '../support/operator-under-test';
import { ReconcilerProcess, serviceAccountKubeconfig } from '../support/reconciler';
import { servedApplication } from '../support/web-cases';

jest.setTimeout(240_000);

const FIELD_MANAGER = 'cdk8s-operator-kit';

interface Case {
  readonly operator: string;
  readonly controllers: string;
  readonly crds: string[];
  readonly resource: object;
  /** The child to check, as `kind/name`. */
  readonly child: string;
}

const cases: Case[] = [
  {
    operator: 'memcached',
    controllers: 'memcached',
    crds: ['memcacheds.cache.example.com'],
    child: 'deployment/mc',
    resource: { apiVersion: 'cache.example.com/v1', kind: 'Memcached', metadata: { name: 'mc' }, spec: { size: 1 } },
  },
  {
    operator: 'etcd',
    controllers: 'etcdcluster',
    crds: ['etcdclusters.etcd.database.coreos.com'],
    child: 'statefulset/kv',
    resource: {
      apiVersion: 'etcd.database.coreos.com/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: 'kv' },
      spec: { replicas: 1, resources: { limits: { memory: '512Mi' }, requests: { cpu: '100m', memory: '128Mi' } } },
    },
  },
  {
    operator: 'crontab',
    controllers: 'crontab',
    crds: ['crontabs.stable.example.com'],
    child: 'cronjob/ct',
    // Schedules here are never due during a test run: a run would change the status (a real
    // write, not a rewrite) and spoil the write counts below.
    resource: {
      apiVersion: 'stable.example.com/v1',
      kind: 'CronTab',
      metadata: { name: 'ct' },
      spec: { cronSpec: '0 0 1 1 *', image: 'busybox:1.36' },
    },
  },
  {
    operator: 'webapp',
    controllers: 'application,webapp',
    crds: ['applications.app.aiops.org', 'webapps.apps.example.com'],
    child: 'ingress/app',
    resource: servedApplication,
  },
  {
    operator: 'database',
    controllers: 'database',
    crds: ['databases.database.example.com'],
    child: 'statefulset/db',
    resource: {
      apiVersion: 'database.example.com/v1alpha1',
      kind: 'Database',
      metadata: { name: 'db' },
      spec: {
        type: 'postgresql',
        version: '16',
        storage: { size: '1Gi' },
        backup: { enabled: true, schedule: '0 0 1 1 *' },
        deletionPolicy: 'Delete',
      },
    },
  },
];

const operators = new Map<string, OperatorUnderTest>();
/** Every reconciler process this suite started: whose writes the write counts look at. */
const started: ReconcilerProcess[] = [];

beforeAll(async () => {
  for (const c of cases) {
    const op = await startOperatorUnderTest({ operator: c.operator, controllers: c.controllers, crds: c.crds });
    operators.set(c.operator, op);
    started.push(op.reconciler);
    kubectlOk(['apply', '-n', op.ns, '-f', '-'], { input: JSON.stringify(c.resource) });
    const [kind = '', name = ''] = c.child.split('/');
    await eventually(`${c.child} of ${c.operator}`, () => op.get(kind, name), 60_000);
  }
});

afterAll(async () => {
  for (const op of operators.values()) expect((await op.reconciler.stop()).code).toBe(0);
});

function op(name: string): OperatorUnderTest {
  return operators.get(name)!;
}

/** Waits until the resource's status describes its current generation with Degraded=False. */
async function settled(o: OperatorUnderTest, kind: string, name: string): Promise<any> {
  return eventually(
    `${kind}/${name} settled`,
    () => {
      const r = o.get(kind, name);
      const degraded = r?.status?.conditions?.find((c: any) => c.type === 'Degraded');
      return r?.status?.observedGeneration === r?.metadata.generation && degraded?.status === 'False' ? r : undefined;
    },
    60_000,
  );
}

describe('a field dropped from the desired object is removed from the child', () => {
  test('removing spec.resources from an EtcdCluster removes the limits from its StatefulSet (requests go back to the defaults)', async () => {
    const o = op('etcd');
    // The requests equal the defaults, so only the limits go: the case a "desired ⊆ live" check misses.
    expect(o.get('statefulset', 'kv').spec.template.spec.containers[0].resources).toEqual({
      limits: { memory: '512Mi' },
      requests: { cpu: '100m', memory: '128Mi' },
    });
    kubectlOk([
      'patch',
      'etcdcluster',
      'kv',
      '-n',
      o.ns,
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/resources"}]',
    ]);
    const resources = await eventually('no limits on the member container', () => {
      const r = o.get('statefulset', 'kv').spec.template.spec.containers[0].resources;
      return r.limits === undefined ? r : undefined;
    });
    expect(resources).toEqual({ requests: { cpu: '100m', memory: '128Mi' } });
    await settled(o, 'etcdcluster', 'kv');
  });

  test("removing an Application's ingress className and tlsSecretName removes the class and TLS from its Ingress", async () => {
    const o = op('webapp');
    const before = o.get('ingress', 'app');
    expect(before.spec).toMatchObject({
      ingressClassName: 'nginx',
      tls: [{ hosts: ['app.example.com'], secretName: 'app-tls' }],
    });
    kubectlOk([
      'patch',
      'application',
      'app',
      '-n',
      o.ns,
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/ingress/className"},{"op":"remove","path":"/spec/ingress/tlsSecretName"}]',
    ]);
    const after = await eventually('an Ingress without class and TLS', () => {
      const ing = o.get('ingress', 'app');
      return ing.spec.ingressClassName === undefined && ing.spec.tls === undefined ? ing : undefined;
    });
    expect(after.spec.rules[0].host).toBe('app.example.com');
    const app = await settled(o, 'application', 'app');
    expect(app.status.url).toBe('http://app.example.com/');
  });

  // Stands for an operator upgrade whose construct stops rendering a field: our field manager
  // owns a label the construct does not render. The next reconcile must remove it.
  test.each(cases.map((c) => [c.operator, c.child] as const))(
    '%s: a field our manager owns but no longer renders is removed from %s',
    async (operator, child) => {
      const o = op(operator);
      const [kind = '', name = ''] = child.split('/');
      const live = o.get(kind, name);
      const applied = {
        apiVersion: live.apiVersion,
        kind: live.kind,
        metadata: {
          name,
          namespace: o.ns,
          labels: { ...live.metadata.labels, 'example.com/stale': 'yes' },
          ownerReferences: live.metadata.ownerReferences,
        },
        spec: live.spec,
      };
      kubectlOk(
        ['apply', '--server-side', '--force-conflicts', `--field-manager=${FIELD_MANAGER}`, '-n', o.ns, '-f', '-'],
        { input: JSON.stringify(applied) },
      );
      await eventually(`the stale label to be removed from ${child}`, () =>
        o.get(kind, name).metadata.labels?.['example.com/stale'] === undefined ? true : undefined,
      );
    },
  );
});

/** Write requests by the reconcilers this suite started (Lease renewals aside), from the audit log. */
function operatorWrites(mark = 0): string[] {
  return writesBy(started, mark)
    .filter((w) => w.resource !== 'leases')
    .map((w) => `${w.user.split(':')[2] ?? w.user} ${w.verb} ${w.requestURI}`);
}

async function quietFor(ms: number): Promise<number> {
  return eventually(
    `no operator writes for ${ms / 1000}s`,
    async () => {
      const start = auditMark();
      await new Promise((r) => setTimeout(r, ms));
      return operatorWrites(start).length === 0 ? auditMark() : undefined;
    },
    90_000,
    0,
  );
}

async function restart(o: OperatorUnderTest, c: Case, extraArgs: string[] = []): Promise<ReconcilerProcess> {
  expect((await o.reconciler.stop()).code).toBe(0);
  const next = await ReconcilerProcess.start({
    kubeconfig: serviceAccountKubeconfig({
      namespace: `${c.operator}-system`,
      serviceAccount: `${c.operator}-operator`,
    }),
    args: [`--controllers=${c.controllers}`, `--namespace=${o.ns}`, ...extraArgs],
    name: `${c.operator}-restarted`,
  });
  operators.set(c.operator, { ...o, reconciler: next });
  started.push(next);
  return next;
}

describe('settled children are not rewritten', () => {
  test('a fresh start of every operator over settled resources, and its resyncs, write nothing', async () => {
    for (const c of cases) {
      const r = c.resource as { kind: string; metadata: { name: string } };
      await settled(op(c.operator), r.kind.toLowerCase(), r.metadata.name);
    }
    const mark = await quietFor(3000);
    // The new processes list everything (LIST items carry no apiVersion/kind) and reconcile it all.
    const restarted = await Promise.all(cases.map((c) => restart(op(c.operator), c, ['--sync-period=3s'])));
    for (const r of restarted) {
      await eventually(`${r.name} to reconcile`, async () =>
        (await r.metric('controller_runtime_reconcile_total')) >= 1 ? true : undefined,
      );
    }
    // Two resyncs at --sync-period=3s: waited for, not timed (a busy machine runs them late).
    for (const r of restarted)
      await eventually(
        `${r.name}'s first two resyncs`,
        async () => ((await r.metric('controller_runtime_reconcile_total')) >= 3 ? true : undefined),
        60_000,
      );
    expect(operatorWrites(mark)).toEqual([]);
  });

  test('a new leader taking over settled Memcacheds writes nothing', async () => {
    const c = cases[0]!;
    const o = op(c.operator);
    const items = Array.from({ length: 10 }, (_, i) => ({
      apiVersion: 'cache.example.com/v1',
      kind: 'Memcached',
      metadata: { name: `led-${i}` },
      spec: { size: 1 + (i % 2) },
    }));
    kubectlOk(['apply', '-n', o.ns, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
    for (const m of items) await settled(o, 'memcached', m.metadata.name);
    const lease = `takeover-${o.ns}`;
    const args = [
      '--leader-elect',
      `--leader-election-id=${lease}`,
      '--leader-election-namespace=memcached-system',
      '--leader-election-lease-duration=4s',
      '--leader-election-renew-deadline=3s',
      '--leader-election-retry-period=500ms',
    ];
    const first = await restart(o, c, args);
    const holder = () => getJson(['get', 'lease', lease, '-n', 'memcached-system']).spec.holderIdentity ?? '';
    await eventually('the first process to lead', () => (holder().startsWith(first.name) ? true : undefined));
    const mark = await quietFor(3000);
    const second = await ReconcilerProcess.start({
      kubeconfig: serviceAccountKubeconfig({ namespace: 'memcached-system', serviceAccount: 'memcached-operator' }),
      args: [`--controllers=${c.controllers}`, `--namespace=${o.ns}`, ...args],
      name: 'memcached-second',
    });
    started.push(second);
    // From here on the second process is the one to stop at the end, whatever happens below.
    operators.set(c.operator, { ...o, reconciler: second });
    await first.stop('SIGKILL');
    await eventually(
      'the second process to lead',
      () => (holder().startsWith('memcached-second') ? true : undefined),
      30_000,
    );
    await eventually('the new leader to reconcile everything', async () =>
      (await second.metric('controller_runtime_reconcile_total')) >= items.length ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 2000));
    expect(operatorWrites(mark)).toEqual([]);
  });
});

describe('Database deletionPolicy: Delete → Retain really retains', () => {
  const pvcs = (ns: string) =>
    getJson(['get', 'pvc', '-n', ns])
      .items.map((p: any) => p.metadata.name)
      .sort();

  test('switching to Retain removes every owner reference that would delete data; deleting the Database keeps claims and credentials', async () => {
    const o = op('database');
    const db = o.get('database', 'db');
    await eventually(
      'the data claim, backup claim and credentials',
      () =>
        pvcs(o.ns).includes('data-db-0') && pvcs(o.ns).includes('db-backup') && o.get('secret', 'db-credentials')
          ? true
          : undefined,
      60_000,
    );
    // Under Delete: the backup claim and the retention ConfigMap (owner of the Secret) are owned.
    expect(o.get('pvc', 'db-backup').metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Database', uid: db.metadata.uid }),
    ]);
    const retention = o.get('configmap', 'db-retention');
    expect(retention.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Database', uid: db.metadata.uid }),
    ]);
    const secret = o.get('secret', 'db-credentials');
    expect(secret.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'ConfigMap', name: 'db-retention', uid: retention.metadata.uid }),
    ]);

    kubectlOk(['patch', 'database', 'db', '-n', o.ns, '--type=merge', '-p', '{"spec":{"deletionPolicy":"Retain"}}']);
    await eventually('no owner on the backup claim and the retention ConfigMap', () =>
      !o.get('pvc', 'db-backup').metadata.ownerReferences &&
      !o.get('configmap', 'db-retention').metadata.ownerReferences
        ? true
        : undefined,
    );
    await eventually(
      'the StatefulSet to release the data claim',
      () => {
        const owners = o.get('pvc', 'data-db-0').metadata.ownerReferences ?? [];
        return owners.length === 0 ? true : undefined;
      },
      60_000,
    );
    await settled(o, 'database', 'db');

    kubectlOk(['delete', 'database', 'db', '-n', o.ns]);
    await eventually('the StatefulSet to be collected', () => (o.get('statefulset', 'db') ? undefined : true), 90_000);
    // Give the garbage collector the time it would need to (wrongly) delete more.
    await new Promise((r) => setTimeout(r, 5000));
    expect(pvcs(o.ns)).toEqual(['data-db-0', 'db-backup']);
    expect(o.get('secret', 'db-credentials').data).toEqual(secret.data);
    expect(o.get('configmap', 'db-retention')).toBeDefined();
  });
});

describe('names the children cannot take are rejected by the API server', () => {
  const long = (n: number) => `n${'x'.repeat(n - 1)}`;
  test.each([
    ['EtcdCluster', 'etcd', { apiVersion: 'etcd.database.coreos.com/v1alpha1', spec: {} }, 52],
    [
      'Database',
      'database',
      {
        apiVersion: 'database.example.com/v1alpha1',
        spec: { type: 'mysql', version: '8.4', storage: { size: '1Gi' } },
      },
      52,
    ],
    [
      'CronTab',
      'crontab',
      { apiVersion: 'stable.example.com/v1', spec: { cronSpec: '* * * * *', image: 'busybox' } },
      52,
    ],
    ['Application', 'webapp', { apiVersion: 'app.aiops.org/v1', spec: { image: 'nginx' } }, 63],
    ['Memcached', 'memcached', { apiVersion: 'cache.example.com/v1', spec: { size: 1 } }, 63],
  ] as const)(
    '%s: a name longer than its children allow is refused, naming metadata.name',
    (kind, operator, body, max) => {
      const ns = op(operator).ns;
      const tooLong = kubectl(['create', '--dry-run=server', '-n', ns, '-f', '-'], {
        input: JSON.stringify({ ...body, kind, metadata: { name: long(max + 1) } }),
      });
      expect(tooLong.code).not.toBe(0);
      // The field is named as the path of the error, not `<nil>`.
      expect(tooLong.stderr).toContain(`metadata.name: Invalid value: must be at most ${max} characters`);
      kubectlOk(['create', '--dry-run=server', '-n', ns, '-f', '-'], {
        input: JSON.stringify({ ...body, kind, metadata: { name: long(max) } }),
      });
    },
  );

  test.each([
    [
      'EtcdCluster',
      'etcd',
      { apiVersion: 'etcd.database.coreos.com/v1alpha1', spec: { backup: { schedule: '@daily' } } },
    ],
    [
      'Database',
      'database',
      {
        apiVersion: 'database.example.com/v1alpha1',
        spec: { type: 'mysql', version: '8.4', storage: { size: '1Gi' }, backup: { enabled: true } },
      },
    ],
  ] as const)(
    '%s with backups: the CronJob <name>-backup needs a name of at most 45 characters',
    (kind, operator, body) => {
      const ns = op(operator).ns;
      const tooLong = kubectl(['create', '--dry-run=server', '-n', ns, '-f', '-'], {
        input: JSON.stringify({ ...body, kind, metadata: { name: long(46) } }),
      });
      expect(tooLong.code).not.toBe(0);
      expect(tooLong.stderr).toContain('metadata.name: Invalid value: must be at most 45 characters');
      kubectlOk(['create', '--dry-run=server', '-n', ns, '-f', '-'], {
        input: JSON.stringify({ ...body, kind, metadata: { name: long(45) } }),
      });
    },
  );

  test('a Service is named after an EtcdCluster, so its name must start with a letter', () => {
    const r = kubectl(['create', '--dry-run=server', '-n', op('etcd').ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'etcd.database.coreos.com/v1alpha1',
        kind: 'EtcdCluster',
        metadata: { name: '1kv' },
        spec: {},
      }),
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('metadata.name: Invalid value: must start with a letter');
  });
});

describe('quantities in any spelling settle: the change check compares them as the API server stores them', () => {
  // Valid but non-canonical: the API server stores the children's quantities as 2Gi, 500m,
  // 1536Mi, 1Gi. Compared as written, every reconcile re-applied and the status never came.
  const etcd = {
    apiVersion: 'etcd.database.coreos.com/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name: 'quant' },
    spec: {
      replicas: 1,
      storage: '2048Mi',
      resources: { requests: { cpu: '0.5', memory: '1.5Gi' }, limits: { memory: 2147483648 } },
      backup: { schedule: '0 0 1 1 *', storage: '1024Mi' },
    },
  };
  const database = {
    apiVersion: 'database.example.com/v1alpha1',
    kind: 'Database',
    metadata: { name: 'quant' },
    spec: {
      type: 'postgresql',
      version: '16',
      storage: { size: '1.5Gi' },
      backup: { enabled: true, schedule: '0 0 1 1 *', storageSize: '2048Mi' },
    },
  };

  test('an EtcdCluster and a Database: the status is written and, once settled, nothing more', async () => {
    const cases = [
      ['etcd', 'etcdcluster', etcd],
      ['database', 'database', database],
    ] as const;
    for (const [operator, , resource] of cases)
      kubectlOk(['apply', '-n', op(operator).ns, '-f', '-'], { input: JSON.stringify(resource) });
    for (const [operator, kind] of cases) {
      const o = op(operator);
      const r = await settled(o, kind, 'quant');
      expect(r.status.observedGeneration).toBe(r.metadata.generation);
      // The StatefulSet holds the canonical spellings: the comparison really was by value.
      const sts = o.get('statefulset', 'quant');
      expect(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toMatch(/^(2Gi|1536Mi)$/);
    }
    const mark = await quietFor(4000);
    expect(operatorWrites(mark)).toEqual([]);
  });
});
