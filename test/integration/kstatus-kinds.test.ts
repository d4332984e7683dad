/**
 * Every kind the kit ships, judged by kstatus — the rules Helm 4's `--wait`, Flux's health checks,
 * kpt and Config Sync wait with (the real library, built from its Go module) — and by `kubectl wait
 * --for=condition=Ready`, against the real API server:
 * - a resource no reconcile has seen yet (in a namespace the reconciler does not watch): InProgress;
 * - a reconciled resource waiting for what the cluster may yet give (a quota that admits no pod):
 *   InProgress, never Current; the CronTab, whose CronJob is all it waits for, has no such state;
 * - a healthy resource: Current, and `Ready=True`.
 * The degraded state (a child it cannot own: Failed) is checked for every kind in
 * never-adopt.test.ts; a healthy EtcdCluster, which needs its members running as real etcd
 * processes, in etcd-reconciler.test.ts; a user's cdk8s-plus kind in blog-site.test.ts.
 */
import { KIT_CONTROLLERS } from '../../constructs';
import {
  createTestNamespace,
  eventually,
  getJsonIfExists,
  installDist,
  kubectl,
  kubectlOk,
  testKubeconfig,
  testWithNodes,
} from '../support/kube';
import { kstatusOf } from '../support/kstatus';
import { ReconcilerProcess } from '../support/reconciler';

jest.setTimeout(180_000);

interface KindCase {
  /** The controller, as `--controllers` names it. */
  readonly controller: string;
  /**
   * A spec it can be healthy with on the test cluster's nodes, for the resource of this name (a
   * host is claimed by one resource in the whole cluster, so each has its own).
   */
  readonly spec: Record<string, unknown> | ((name: string) => Record<string, unknown>);
  /** Whether pods stand between it and ready (so a quota admitting none keeps it waiting). */
  readonly waitsForPods: boolean;
  /** Whether it can be healthy here (an EtcdCluster needs its members to answer). */
  readonly healthyHere: boolean;
}

const CASES: KindCase[] = [
  { controller: 'memcached', spec: { size: 1 }, waitsForPods: true, healthyHere: true },
  { controller: 'etcdcluster', spec: { replicas: 1 }, waitsForPods: true, healthyHere: false },
  {
    controller: 'crontab',
    spec: { cronSpec: '*/5 * * * *', image: 'busybox' },
    waitsForPods: false,
    healthyHere: true,
  },
  { controller: 'application', spec: { image: 'nginx:1.27' }, waitsForPods: true, healthyHere: true },
  {
    controller: 'webapp',
    spec: (name) => ({ image: 'nginx:1.27', domain: `${name}.example.com` }),
    waitsForPods: true,
    healthyHere: true,
  },
  {
    controller: 'database',
    spec: { type: 'postgresql', version: '16', storage: { size: '1Gi' } },
    waitsForPods: true,
    healthyHere: true,
  },
];

function declarationOf(c: KindCase): (typeof KIT_CONTROLLERS)[number] {
  const decl = KIT_CONTROLLERS.find((d) => d.name === c.controller);
  if (!decl) throw new Error(`no kit controller ${c.controller}`);
  return decl;
}

/** The kind a controller reconciles, at the version it stores. */
function kindOf(c: KindCase): { kind: string; apiVersion: string } {
  const decl = declarationOf(c);
  return { kind: decl.for.kind, apiVersion: decl.for.apiVersion };
}

let healthy: string;
let starved: string;
let unwatched: string;
let reconciler: ReconcilerProcess | undefined;

/** The resource of this kind in one state: named for both, since children take their owner's name. */
const nameOf = (c: KindCase, state: 'unseen' | 'starved' | 'healthy') => `${c.controller}-${state}`;

function create(c: KindCase, namespace: string, state: 'unseen' | 'starved' | 'healthy'): void {
  kubectlOk(['create', '-n', namespace, '-f', '-'], {
    input: JSON.stringify({
      ...kindOf(c),
      metadata: { name: nameOf(c, state) },
      spec: typeof c.spec === 'function' ? c.spec(nameOf(c, state)) : c.spec,
    }),
  });
}

/** Each condition as `<status> <reason>: <message>`, by type: all of it shows when an expectation fails. */
function summary(resource: any): Record<string, string> {
  const conditions: { type: string; status: string; reason: string; message: string }[] =
    resource?.status?.conditions ?? [];
  return Object.fromEntries(conditions.map((x) => [x.type, `${x.status} ${x.reason}: ${x.message}`]));
}

/** A condition's status, as `summary` writes it. */
const is = (status: 'True' | 'False') => expect.stringMatching(new RegExp(`^${status} `));

const kindName = (c: KindCase) => kindOf(c).kind.toLowerCase();

/** The name of the CRD of a case's kind. */
const crdOf = (c: KindCase) => declarationOf(c).for.crdName;

beforeAll(async () => {
  installDist();
  // This file's kinds only: `crd --all` on the shared plane also waited on other files' CRDs, and
  // failed when one of them was deleted between kubectl's list and its wait.
  const crds = [...new Set(CASES.map((c) => `crd/${crdOf(c)}`))];
  kubectlOk(['wait', '--for', 'condition=established', '--timeout=60s', ...crds]);
  [healthy, starved, unwatched] = ['kstatus-ok', 'kstatus-starved', 'kstatus-unwatched'].map((p) =>
    createTestNamespace(p),
  ) as [string, string, string];
  // No pod can be made here: workloads report FailedCreate, which waiting (a larger quota) may cure.
  kubectlOk(['create', 'quota', 'no-pods', '-n', starved, '--hard=pods=0']);
  // Counted before anything is made there, as Kubernetes' own quota tests wait: a run admitted the
  // workloads' pods while the quota had no status yet (the controller manager counted it 12 s on).
  kubectlOk(['wait', '--for=jsonpath={.status.hard.pods}=0', '--timeout=120s', 'quota/no-pods', '-n', starved]);
  for (const c of CASES) {
    create(c, unwatched, 'unseen');
    create(c, healthy, 'healthy');
    if (c.waitsForPods) create(c, starved, 'starved');
  }
  // Every kit controller in one reconciler: what each writes is the same whoever runs it (the
  // rights of each operator's ServiceAccount are checked by the tests of its own).
  reconciler = await ReconcilerProcess.start({
    kubeconfig: testKubeconfig(),
    args: [`--controllers=${CASES.map((c) => c.controller).join(',')}`, `--namespaces=${healthy},${starved}`],
    name: 'kstatus-kinds',
  });
});

afterAll(async () => {
  expect((await reconciler?.stop())?.code).toBe(0);
});

describe.each(CASES.map((c) => [kindOf(c).kind, c] as const))('%s, as kstatus judges it', (_kind, c) => {
  test('not yet reconciled: InProgress, with the observedGeneration its CRD defaults to 0', () => {
    const unseen = getJsonIfExists(['get', kindName(c), nameOf(c, 'unseen'), '-n', unwatched]);
    expect(unseen.status).toEqual({ observedGeneration: 0 });
    expect(kstatusOf(kindName(c), nameOf(c, 'unseen'), unwatched)).toBe('InProgress');
  });

  (c.waitsForPods ? testWithNodes : test.skip)(
    'reconciled, waiting for pods a quota will not admit: InProgress (Reconciling), not Ready',
    async () => {
      const waiting = await eventually(
        `${kindOf(c).kind} starved reconciled, not Ready`,
        () => {
          const r = getJsonIfExists(['get', kindName(c), nameOf(c, 'starved'), '-n', starved]);
          const ready = r?.status?.conditions?.find((x: any) => x.type === 'Ready');
          return r?.status?.observedGeneration === r?.metadata.generation && ready ? r : undefined;
        },
        90_000,
      );
      // Whole, so a failure shows every condition.
      expect(summary(waiting)).toMatchObject({ Ready: is('False'), Reconciling: is('True'), Stalled: is('False') });
      expect(kstatusOf(kindName(c), nameOf(c, 'starved'), starved)).toBe('InProgress');
    },
  );

  (c.healthyHere ? testWithNodes : test.skip)(
    'healthy: Current, and kubectl wait --for=condition=Ready returns',
    async () => {
      const waited = kubectl([
        'wait',
        '--for=condition=Ready',
        '--timeout=120s',
        kindName(c),
        nameOf(c, 'healthy'),
        '-n',
        healthy,
      ]);
      const now = getJsonIfExists(['get', kindName(c), nameOf(c, 'healthy'), '-n', healthy]);
      expect({ code: waited.code, conditions: summary(now) }).toMatchObject({
        code: 0,
        conditions: { Ready: is('True') },
      });
      expect(kstatusOf(kindName(c), nameOf(c, 'healthy'), healthy)).toBe('Current');
      expect(summary(now)).toMatchObject({ Available: is('True'), Reconciling: is('False'), Stalled: is('False') });
    },
  );
});
