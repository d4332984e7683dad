/**
 * `plan` prints the reconciler's plan, not a second program's guess (#79): for each kit kind's seed
 * sample, two restores, a prune, a StatefulSet's storage growth and a rollout stuck behind a broken
 * pod, the writes `plan -o json` lists are exactly — in kind, name, verb and order — the writes the
 * reconciler's next reconcile makes, as the API server's audit log records them.
 *
 * Each case: the reconciler stopped, the change made, `plan` run; then the reconciler started, and
 * the writes of its first reconcile that writes, as it logs them (typed) and as the audit log has
 * them. Dry runs, Events, Leases and the resource's own writes (finalizer, status) are not
 * the plan's; a kind's create-once `prepare` writes (a Database's credentials Secret) are not
 * previewed, and are named apart.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { keyValueStoreApp } from '../../examples/key-value-store/app';
import { CRASH_LOOP_LABEL, EXPANDABLE_STORAGE_CLASS } from '../../testing/control-plane';
import { type AuditedWrite, auditMark, writesBy } from '../support/audit';
import { runCommand } from '../support/controllers-module';
import { startExampleOperator, startExampleReconciler } from '../support/example-operator';
import { eventually, getJson, getJsonIfExists, kubectlOk, testWithNodes } from '../support/kube';
import { startOperatorUnderTest } from '../support/operator-under-test';
import { servedApplication } from '../support/web-cases';
import type { ReconcilerProcess } from '../support/reconciler';

jest.setTimeout(240_000);

const ROOT = path.resolve(__dirname, '..', '..');
const seed = (file: string) => fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'seeds', file), 'utf8');

/** The resource names the API server gives each kind (`kubectl api-resources`), by kind. */
let plurals: Map<string, string>;

beforeAll(() => {
  const r = kubectlOk(['api-resources', '--no-headers']);
  plurals = new Map(
    r
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const fields = line.trim().split(/\s+/);
        return [fields.at(-1) ?? '', fields[0] ?? ''];
      }),
  );
});

/** One write as the audit log and the plan can both say it: `patch statefulsets/kv`. */
type Write = string;

/** The verb of the request each kind of planned action makes. */
const VERBS: Record<string, string> = {
  ApplyChild: 'patch',
  GrowClaim: 'patch',
  RecreateStatefulSet: 'delete',
  PruneChild: 'delete',
  DeleteStuckPod: 'delete',
};

interface Planned {
  readonly code: number | null;
  /** As requests: `patch statefulsets/kv`. */
  readonly writes: Write[];
  /** As the reconciler logs them: `ApplyChild StatefulSet/kv`. */
  readonly actions: string[];
  readonly types: string[];
  readonly stderr: string;
}

/** `plan -o json` of a kind in a namespace: its writes as requests, and their action types. */
function plan(kind: string, ns: string, controllers?: string): Planned {
  const r = runCommand([
    'plan',
    '--kind',
    kind,
    '-n',
    ns,
    '-o',
    'json',
    ...(controllers ? ['--controllers', controllers] : []),
  ]);
  const json = r.stdout ? JSON.parse(r.stdout) : { writes: [] };
  const writes = (json.writes as { type: string; kind: string; name: string }[]).map(
    (w) => `${VERBS[w.type] ?? w.type} ${plurals.get(w.kind) ?? w.kind}/${w.name}`,
  );
  const listed = json.writes as { type: string; kind: string; name: string }[];
  return {
    code: r.status,
    writes,
    actions: listed.map((w) => `${w.type} ${w.kind}/${w.name}`),
    types: listed.map((w) => w.type),
    stderr: r.stderr,
  };
}

/** The object a request names: the last segment of its path (none for a create). */
function nameOf(write: AuditedWrite): string {
  const segments = new URL(write.requestURI, 'https://api').pathname.split('/');
  return segments.at(-1) ?? '';
}

/** The writes of the reconciler's first reconcile of `name` that wrote anything, as it logs them (`--log-level=debug`). */
async function loggedWrites(reconciler: ReconcilerProcess, name: string): Promise<string[]> {
  return eventually(`the reconciler's first writes for ${name}`, () => {
    for (const line of reconciler.logs) {
      const entry = JSON.parse(line);
      if (entry.msg === "the reconcile's writes" && entry.name === name)
        return (entry.writes as { type: string; kind: string; name: string }[]).map(
          (w) => `${w.type} ${w.kind}/${w.name}`,
        );
    }
    return undefined;
  });
}

/**
 * What the reconciler's first reconcile of `name` that wrote anything wrote: as it logs them, and
 * as the API server's audit log has them after `mark` — the children's writes (dry runs, Events,
 * Leases and the resource's own writes left out) up to as many as it logged, and apart from them
 * the create-once writes of its `prepare` step (POSTs: the runtime creates no child so).
 */
async function reconciled(
  reconciler: ReconcilerProcess,
  mark: number,
  plural: string,
  name: string,
): Promise<{ logged: string[]; writes: Write[]; created: string[] }> {
  const logged = await loggedWrites(reconciler, name);
  const children = () =>
    writesBy([reconciler], mark).filter(
      (w) => !w.requestURI.includes('dryRun=') && !['events', 'leases', plural].includes(w.resource),
    );
  const log = await eventually(`${logged.length} writes in the audit log`, () => {
    const applied = children().filter((w) => w.verb !== 'create');
    return applied.length >= logged.length ? children() : undefined;
  });
  const applied = log.filter((w) => w.verb !== 'create').slice(0, logged.length);
  return {
    logged,
    writes: applied.map((w) => `${w.verb} ${w.resource}/${nameOf(w)}`),
    // Made: a create answered 409 (prepare asking again for what it made before) made nothing.
    created: [...new Set(log.filter((w) => w.verb === 'create' && w.code === 201).map((w) => w.resource))],
  };
}

interface SeedCase {
  readonly operator: string;
  readonly controllers: string;
  readonly crds: string[];
  readonly kind: string;
  readonly plural: string;
  readonly name: string;
  readonly manifest: string;
  /** What its `prepare` step creates once, which no preview shows. */
  readonly createdOnce?: string[];
  /** A restore: its plan makes restore Jobs. */
  readonly restores?: boolean;
}

const seeds: SeedCase[] = [
  {
    operator: 'memcached',
    controllers: 'memcached',
    crds: ['memcacheds.cache.example.com'],
    kind: 'Memcached',
    plural: 'memcacheds',
    name: 'memcached-sample',
    manifest: seed('001-memcached-sample.yaml'),
  },
  {
    operator: 'etcd',
    controllers: 'etcdcluster',
    crds: ['etcdclusters.etcd.database.coreos.com'],
    kind: 'EtcdCluster',
    plural: 'etcdclusters',
    name: 'my-etcd-cluster',
    manifest: seed('000-my-etcd-cluster.yaml'),
    // Its TLS certificates, issued by prepare.
    createdOnce: ['secrets'],
  },
  {
    operator: 'crontab',
    controllers: 'crontab',
    crds: ['crontabs.stable.example.com'],
    kind: 'CronTab',
    plural: 'crontabs',
    name: 'my-new-cron-object',
    manifest: seed('000-my-new-cron-object.yaml'),
  },
  {
    operator: 'webapp',
    controllers: 'webapp',
    crds: ['webapps.apps.example.com'],
    kind: 'WebApp',
    plural: 'webapps',
    name: 'my-webapp',
    manifest: seed('001-my-webapp.yaml'),
  },
  {
    operator: 'webapp',
    controllers: 'application',
    crds: ['applications.app.aiops.org'],
    kind: 'Application',
    plural: 'applications',
    name: 'app',
    // No seed has an Application: the one the reconciler tests use.
    manifest: JSON.stringify(servedApplication),
  },
  {
    operator: 'database',
    controllers: 'database',
    crds: ['databases.database.example.com'],
    kind: 'Database',
    plural: 'databases',
    name: 'my-db',
    manifest: seed('001-my-db.yaml'),
    createdOnce: ['secrets'],
  },
  // Restores: a Database and an EtcdCluster seeded from a backup — the data claims and restore Jobs
  // made first, the servers held until the Jobs complete.
  {
    operator: 'database',
    controllers: 'database',
    crds: ['databases.database.example.com'],
    kind: 'Database',
    plural: 'databases',
    name: 'seeded',
    manifest: JSON.stringify({
      apiVersion: 'database.example.com/v1alpha1',
      kind: 'Database',
      metadata: { name: 'seeded' },
      spec: { type: 'postgresql', version: '16', storage: { size: '1Gi' }, restore: { fromDatabase: 'busy' } },
    }),
    createdOnce: ['secrets'],
    restores: true,
  },
  {
    operator: 'etcd',
    controllers: 'etcdcluster',
    crds: ['etcdclusters.etcd.database.coreos.com'],
    kind: 'EtcdCluster',
    plural: 'etcdclusters',
    name: 'seeded',
    manifest: JSON.stringify({
      apiVersion: 'etcd.database.coreos.com/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: 'seeded' },
      spec: { replicas: 3, restore: { claim: 'snap-backups', path: 'snap-20261129T020000Z.db' } },
    }),
    createdOnce: ['secrets'],
    restores: true,
  },
];

describe("plan's writes are the reconciler's", () => {
  test.each(seeds.map((c) => [`${c.kind} ${c.name}`, c] as const))(
    '%s (new): the first reconcile writes what plan listed, in its order',
    async (_name, c) => {
      const op = await startOperatorUnderTest({
        operator: c.operator,
        controllers: c.controllers,
        crds: c.crds,
        args: ['--log-level=debug'],
      });
      expect((await op.reconciler.stop()).code).toBe(0);
      kubectlOk(['apply', '-n', op.ns, '-f', '-'], { input: c.manifest });
      const planned = plan(c.kind, op.ns);
      expect({ code: planned.code, stderr: planned.stderr }).toEqual({ code: 1, stderr: '' });
      expect(planned.writes.length).toBeGreaterThan(0);
      if (c.restores) expect(planned.writes).toContainEqual(expect.stringMatching(/^patch jobs\/seeded-restore/));
      const mark = auditMark();
      const reconciler = await op.startAgain();
      try {
        const done = await reconciled(reconciler, mark, c.plural, c.name);
        expect(done).toEqual({ logged: planned.actions, writes: planned.writes, created: c.createdOnce ?? [] });
      } finally {
        expect((await reconciler.stop()).code).toBe(0);
      }
    },
  );

  test('a child no longer rendered (a Database’s backups switched off): its CronJob pruned, as plan listed', async () => {
    const op = await startOperatorUnderTest({
      operator: 'database',
      controllers: 'database',
      crds: ['databases.database.example.com'],
      args: ['--log-level=debug'],
    });
    const db = (enabled: boolean) =>
      JSON.stringify({
        apiVersion: 'database.example.com/v1alpha1',
        kind: 'Database',
        metadata: { name: 'pruned' },
        spec: {
          type: 'postgresql',
          version: '16',
          storage: { size: '1Gi' },
          backup: { enabled, schedule: '0 0 1 1 *' },
        },
      });
    kubectlOk(['apply', '-n', op.ns, '-f', '-'], { input: db(true) });
    await eventually('its backup CronJob', () => op.get('cronjob', 'pruned-backup'), 60_000);
    expect((await op.reconciler.stop()).code).toBe(0);
    kubectlOk(['apply', '-n', op.ns, '-f', '-'], { input: db(false) });
    const planned = plan('Database', op.ns);
    expect(planned.types).toContain('PruneChild');
    expect(planned.writes).toContain('delete cronjobs/pruned-backup');
    const mark = auditMark();
    const reconciler = await op.startAgain();
    try {
      const done = await reconciled(reconciler, mark, 'databases', 'pruned');
      expect(done).toEqual({ logged: planned.actions, writes: planned.writes, created: [] });
      await eventually('the CronJob gone', () => (op.get('cronjob', 'pruned-backup') ? undefined : true));
    } finally {
      expect((await reconciler.stop()).code).toBe(0);
    }
  });
});

describe("plan's writes are the reconciler's, for the writes beyond a child's apply", () => {
  let ns: string;
  let reconciler: ReconcilerProcess;
  const startAgain = () =>
    startExampleReconciler({
      example: 'key-value-store',
      controller: 'keyvaluestore',
      ns,
      args: ['--log-level=debug'],
    });
  const get = (kind: string, name: string) => getJsonIfExists(['get', kind, name, '-n', ns]);
  const condition = (name: string, type: string) =>
    get('keyvaluestore', name)?.status?.conditions?.find((c: any) => c.type === type);
  const store = (name: string, spec: object) =>
    kubectlOk(['apply', '-n', ns, '--server-side', '--field-manager=test', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'kv.example.com/v1alpha1', kind: 'KeyValueStore', metadata: { name }, spec }),
    });
  const controllers = path.join(ROOT, 'examples', 'key-value-store', 'key-value-store.ts');
  const available = (name: string) =>
    eventually(
      `${name}: Available=True and Ready=True`,
      () =>
        condition(name, 'Available')?.status === 'True' && condition(name, 'Ready')?.status === 'True'
          ? true
          : undefined,
      90_000,
    );

  beforeAll(async () => {
    ({ ns, reconciler } = await startExampleOperator({
      example: 'key-value-store',
      app: keyValueStoreApp,
      crd: 'keyvaluestores.kv.example.com',
      controller: 'keyvaluestore',
    }));
  });

  afterAll(async () => {
    expect((await reconciler.stop()).code).toBe(0);
  });

  testWithNodes('storage grown: each claim patched, then the StatefulSet deleted, as plan listed', async () => {
    const storage = { size: '2Gi', storageClassName: EXPANDABLE_STORAGE_CLASS };
    store('grows', { replicas: 2, storage });
    await available('grows');
    expect((await reconciler.stop()).code).toBe(0);
    store('grows', { replicas: 2, storage: { ...storage, size: '5Gi' } });
    const planned = plan('KeyValueStore', ns, controllers);
    expect(planned.types).toEqual(['GrowClaim', 'GrowClaim', 'RecreateStatefulSet']);
    expect(planned.writes).toEqual([
      'patch persistentvolumeclaims/data-grows-0',
      'patch persistentvolumeclaims/data-grows-1',
      'delete statefulsets/grows',
    ]);
    const diff = runCommand(['diff', '--controllers', controllers, '-n', ns, 'keyvaluestore/grows']);
    expect(diff.stdout).toContain(
      [
        `changed   StatefulSet ${ns}/grows`,
        '  claims grow (data 2Gi → 5Gi): each patched where its StorageClass allows volume expansion, then the StatefulSet made again with its pods kept',
        "  GrowClaim PersistentVolumeClaim data-grows-0: claim data-grows-0 asks 2Gi; StatefulSet grows's template asks 5Gi",
        "  GrowClaim PersistentVolumeClaim data-grows-1: claim data-grows-1 asks 2Gi; StatefulSet grows's template asks 5Gi",
        '  RecreateStatefulSet StatefulSet grows: its claim templates grow (data 2Gi → 5Gi), which a StatefulSet does not take in place: deleted with its pods kept, then made again',
      ].join('\n'),
    );
    const mark = auditMark();
    reconciler = await startAgain();
    const done = await reconciled(reconciler, mark, 'keyvaluestores', 'grows');
    expect(done).toEqual({ logged: planned.actions, writes: planned.writes, created: [] });
  });

  testWithNodes('a rollout stuck behind a pod that cannot run: that pod deleted, as plan listed', async () => {
    store('stuck', { replicas: 1, storage: { size: '1Gi', storageClassName: EXPANDABLE_STORAGE_CLASS } });
    await available('stuck');
    expect((await reconciler.stop()).code).toBe(0);
    // Another manager's label makes the pods of the next revision crash-loop; taken away again, the
    // StatefulSet's revision goes back, and its OrderedReady rollout waits on the broken pod forever.
    const patch = { spec: { template: { metadata: { labels: { [CRASH_LOOP_LABEL]: 'true' } } } } };
    kubectlOk(['patch', 'statefulset', 'stuck', '-n', ns, '--type=merge', '-p', JSON.stringify(patch)]);
    await eventually('stuck-0 of the broken revision, crash-looping', () => {
      const pod = get('pod', 'stuck-0');
      const waiting = pod?.status?.containerStatuses?.some((s: any) => s.state?.waiting?.reason === 'CrashLoopBackOff');
      return pod?.metadata.labels?.[CRASH_LOOP_LABEL] && waiting ? true : undefined;
    });
    const label = CRASH_LOOP_LABEL.replace(/\//g, '~1');
    kubectlOk([
      'patch',
      'statefulset',
      'stuck',
      '-n',
      ns,
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'remove', path: `/spec/template/metadata/labels/${label}` }]),
    ]);
    // Planned once the StatefulSet's controller has seen the change (its observedGeneration).
    const planned = await eventually('plan lists the stuck pod', () => {
      const p = plan('KeyValueStore', ns, controllers);
      return p.types.includes('DeleteStuckPod') ? p : undefined;
    });
    expect(planned.writes).toEqual(['delete pods/stuck-0']);
    // diff says it too, for the one resource.
    const diff = runCommand(['diff', '--controllers', controllers, '-n', ns, 'keyvaluestore/stuck']);
    expect(diff.status).toBe(1);
    expect(diff.stdout).toMatch(
      new RegExp(`^deleted +Pod ${ns}/stuck-0\n  stuck on revision stuck-[a-z0-9]+ \\(`, 'm'),
    );
    const mark = auditMark();
    reconciler = await startAgain();
    const done = await reconciled(reconciler, mark, 'keyvaluestores', 'stuck');
    expect(done).toEqual({ logged: planned.actions, writes: planned.writes, created: [] });
    expect(getJson(['get', 'pods', '-n', ns]).items.map((p: any) => p.metadata.name)).toContain('stuck-0');
  });
});
