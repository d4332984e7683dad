/**
 * OLM bundles installed by OLM itself (#70), on the real node: OLM v0.38.0's olm-operator and
 * catalog-operator run as Pods, a catalog of the kit's CronTab bundle (written by the `olm-bundle`
 * command, made a catalog with opm as docs/olm.md says) is served by the Pod OLM makes for its
 * CatalogSource, and a Subscription in a namespace of its own (an OperatorGroup targeting that
 * namespace: OwnNamespace) has OLM resolve it, make the CRD, the account, its rights and the
 * Deployment from the CSV; the operator then runs on the node and reconciles the seed's sample.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { realNodeOf } from '../../testing/node/real-node';
import { runCommand } from '../support/controllers-module';
import { DIST_CRONTAB_OPERATOR, takeRunLock } from './run-coordination';
import { createTestNamespace, eventually, getJson, getJsonIfExists, kubectl, kubectlOk } from '../support/kube';
import {
  OLM_NAMESPACE,
  OPERATORS_NAMESPACE,
  catalogImageArchive,
  olmImageArchive,
  olmObjects,
  olmPrograms,
  writeFileBasedCatalog,
} from '../support/olm-cluster';

const ROOT = path.resolve(__dirname, '..', '..');
const skip = process.env.OPKIT_E2E_SKIP;
const CATALOG_IMAGE = 'opkit.local/kit-catalog:e2e';

/** What OLM and the pods of a namespace say, for a wait that timed out. */
function olmState(namespace: string): string {
  const pods = kubectl(['get', 'pods', '-n', namespace, '-o', 'wide']).stdout;
  const logs = (name: string) => kubectl(['logs', '-n', OLM_NAMESPACE, `deployment/${name}`, '--tail=15']).stdout;
  const objects = kubectl(['get', 'catalogsource,subscription,installplan,csv', '-n', namespace, '-o', 'yaml']).stdout;
  return [
    pods,
    objects.slice(-4000),
    'catalog-operator:',
    logs('catalog-operator'),
    'olm-operator:',
    logs('olm-operator'),
  ].join('\n');
}

// OLM resolves, unpacks nothing (the catalog holds the manifests) and installs in under a minute
// here; the node pulling its images and starting four Pods one after another takes the rest.
jest.setTimeout(420_000);

if (skip) test.todo(`OLM installing the kit's bundles on a real node — skipped: ${skip}`);

(skip ? describe.skip : describe)("OLM installing the kit's bundles on a real node", () => {
  let work: string;
  let ns: string;
  let csvNames: string[];
  /** The real node's name, which the operator's pod must run on. */
  let nodeName: string;
  /** The replicas of the CronTab operator `kubectl apply -f dist/` installed, set back after. */
  let distReplicas: number | undefined;
  let releaseDistOperator: (() => void) | undefined;

  beforeAll(async () => {
    const { dir: programs, missing } = olmPrograms();
    if (!programs) throw new Error(`OLM's programs: ${missing}`);
    const node = realNodeOf(JSON.parse(process.env.OPKIT_TEST_REAL_NODE ?? '{}'));
    nodeName = node.name;
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-e2e-olm-'));

    const bundles = path.join(work, 'bundles');
    const r = runCommand([
      'olm-bundle',
      '--out',
      bundles,
      '--version',
      '0.1.0',
      '--examples',
      path.join(ROOT, 'dist', 'samples', 'crontab-sample.k8s.yaml'),
    ]);
    if (r.status !== 0) throw new Error(`olm-bundle failed (${r.status}): ${r.stderr}`);
    csvNames = writeFileBasedCatalog(programs, [{ dir: path.join(bundles, 'crontab') }], path.join(work, 'catalog'));
    node.loadImage(olmImageArchive(programs, path.join(work, 'olm.tar')));
    node.loadImage(
      catalogImageArchive(programs, path.join(work, 'catalog'), CATALOG_IMAGE, path.join(work, 'catalog.tar')),
    );

    // OLM's CRDs are too large for a client-side apply's annotation.
    kubectlOk(['apply', '--server-side', '-f', path.join(programs, 'crds')]);
    kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', '-f', path.join(programs, 'crds')]);
    const objects = path.join(work, 'olm.json');
    fs.writeFileSync(objects, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: olmObjects() }));
    kubectlOk(['apply', '--server-side', '-f', objects]);
    for (const name of ['olm-operator', 'catalog-operator'])
      kubectlOk(['rollout', 'status', `deployment/${name}`, '-n', OLM_NAMESPACE, '--timeout=180s']);

    // The CronTab operator `kubectl apply -f dist/` installed watches every namespace: it stands
    // aside, so that what reconciles the sample here is the one OLM installed — once no file
    // running beside this one needs it (seed-samples' CronTab).
    releaseDistOperator = await takeRunLock(DIST_CRONTAB_OPERATOR);
    distReplicas = getJsonIfExists(['get', 'deployment', 'crontab-operator', '-n', 'crontab-system'])?.spec?.replicas;
    if (distReplicas !== undefined)
      kubectlOk(['scale', 'deployment', 'crontab-operator', '-n', 'crontab-system', '--replicas=0']);
    ns = createTestNamespace('e2e-olm');
  });

  afterAll(() => {
    if (ns) kubectl(['delete', 'namespace', ns, '--wait=true', '--timeout=120s']);
    kubectl(['delete', 'catalogsource', 'kit-catalog', '-n', OLM_NAMESPACE, '--ignore-not-found']);
    // OLM itself goes, its CRDs stay (as uninstalling OLM leaves them); the rest of the tier runs without it.
    kubectl(['delete', 'namespace', OLM_NAMESPACE, OPERATORS_NAMESPACE, '--ignore-not-found', '--wait=false']);
    if (distReplicas !== undefined)
      kubectl([
        'scale',
        'deployment',
        'crontab-operator',
        '-n',
        'crontab-system',
        `--replicas=${String(distReplicas)}`,
      ]);
    releaseDistOperator?.();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  test('the catalog made with opm from the bundle is served by the Pod OLM runs for its CatalogSource', async () => {
    expect(csvNames).toEqual(['crontab.v0.1.0']);
    kubectlOk(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'CatalogSource',
        metadata: { name: 'kit-catalog', namespace: OLM_NAMESPACE },
        spec: {
          sourceType: 'grpc',
          image: CATALOG_IMAGE,
          displayName: 'cdk8s-operator-kit',
          publisher: 'cdk8s-operator-kit',
          grpcPodConfig: { securityContextConfig: 'restricted' },
        },
      }),
    });
    const source = await eventually(
      'the CatalogSource to be READY',
      () => {
        const s = getJson(['get', 'catalogsource', 'kit-catalog', '-n', OLM_NAMESPACE]);
        return s.status?.connectionState?.lastObservedState === 'READY' ? s : undefined;
      },
      240_000,
      1000,
      () => olmState(OLM_NAMESPACE),
    );
    // Served by a Pod on the node, not by an address given to OLM.
    expect(source.status.registryService).toMatchObject({ protocol: 'grpc', serviceNamespace: OLM_NAMESPACE });
    const pods = getJson(['get', 'pods', '-n', OLM_NAMESPACE, '-l', 'olm.catalogSource=kit-catalog']).items;
    expect(pods.map((p: any) => p.status.phase)).toEqual(['Running']);
    expect(pods[0].spec.containers[0].image).toBe(CATALOG_IMAGE);
  });

  test('a Subscription has OLM install the CronTab operator (OwnNamespace), which runs on the node and reconciles the seed sample', async () => {
    kubectlOk(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            apiVersion: 'operators.coreos.com/v1',
            kind: 'OperatorGroup',
            metadata: { name: 'crontab', namespace: ns },
            spec: { targetNamespaces: [ns] },
          },
          {
            apiVersion: 'operators.coreos.com/v1alpha1',
            kind: 'Subscription',
            metadata: { name: 'crontab', namespace: ns },
            spec: {
              name: 'crontab',
              channel: 'stable',
              source: 'kit-catalog',
              sourceNamespace: OLM_NAMESPACE,
              installPlanApproval: 'Automatic',
            },
          },
        ],
      }),
    });
    const csv = await eventually(
      'the CSV crontab.v0.1.0 to succeed',
      () => {
        const c = getJsonIfExists(['get', 'csv', 'crontab.v0.1.0', '-n', ns]);
        return c?.status?.phase === 'Succeeded' ? c : undefined;
      },
      300_000,
      2000,
      () => olmState(ns),
    );
    expect(csv.status.reason).toBe('InstallSucceeded');
    const subscription = getJson(['get', 'subscription', 'crontab', '-n', ns]);
    expect(subscription.status.installedCSV).toBe('crontab.v0.1.0');
    const plan = getJson(['get', 'installplan', subscription.status.installPlanRef.name, '-n', ns]);
    expect(plan.status.phase).toBe('Complete');
    // The manifests came from the catalog itself: nothing was unpacked from a bundle image.
    expect(plan.status.bundleLookups ?? []).toEqual([]);

    // OLM made the Deployment from the CSV, its account, and bound that account to the CSV's rights.
    const deployment = getJson(['get', 'deployment', 'crontab-operator', '-n', ns]);
    expect(deployment.status.availableReplicas).toBe(1);
    const container = deployment.spec.template.spec.containers[0];
    expect(container.args).toContain('--namespaces=$(WATCH_NAMESPACE)');
    expect(container.env).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'WATCH_NAMESPACE',
          valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.annotations['olm.targetNamespaces']" } },
        }),
      ]),
    );
    const account = deployment.spec.template.spec.serviceAccountName;
    expect(getJson(['get', 'serviceaccount', account, '-n', ns]).metadata.name).toBe(account);
    const pods = getJson(['get', 'pods', '-n', ns, '-l', 'app.kubernetes.io/component=controller']).items;
    expect(pods).toHaveLength(1);
    expect(pods[0].status.phase).toBe('Running');
    expect(pods[0].spec.nodeName).toBe(nodeName);
    expect(pods[0].metadata.annotations['olm.targetNamespaces']).toBe(ns);

    // The seed's sample, applied verbatim where OLM targets: the operator OLM installed makes its CronJob.
    kubectlOk(['apply', '-n', ns, '-f', path.join(ROOT, 'dist', 'samples', 'crontab-sample.k8s.yaml')]);
    const ready = await eventually(
      'the sample CronTab to be Ready',
      () => {
        const c = getJson(['get', 'crontab', 'my-new-cron-object', '-n', ns]);
        const r = c.status?.conditions?.find((x: any) => x.type === 'Ready');
        return r?.status === 'True' && r.observedGeneration === c.metadata.generation ? c : undefined;
      },
      120_000,
      1000,
    );
    const cronJob = getJson(['get', 'cronjob', 'my-new-cron-object', '-n', ns]);
    // The seed's six-field cronSpec, to the minute as a CronJob schedules, as the status says.
    expect(cronJob.spec.schedule).toBe('* * * * *');
    expect(ready.status.schedule).toBe(cronJob.spec.schedule);
    expect(cronJob.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'CronTab',
        name: 'my-new-cron-object',
        uid: ready.metadata.uid,
        controller: true,
      }),
    ]);
    // It leads through a Lease in the namespace OLM installed it in, its holder that Pod.
    const lease = getJson(['get', 'lease', 'crontab-operator-leader', '-n', ns]);
    expect(lease.spec.holderIdentity).toContain(pods[0].metadata.name);
  });
});
