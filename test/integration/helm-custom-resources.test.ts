/**
 * One `helm install` of an operator and a resource of its kind: a chart written with
 * `crdsDirectory` (the CRDs in crds/, which Helm installs before it renders anything else) and a
 * WebApp in `customResources`; then the installed reconciler (its args, its ServiceAccount)
 * reconciles that WebApp.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { webAppController, writeHelmChart } from '../../constructs';
import { helm, helmBinary, helmOk } from '../support/helm';
import { eventually, getJson, getJsonIfExists, kubectl, testKubeconfig } from '../support/kube';
import { type ReconcilerProcess, startInstalledReconciler } from '../support/reconciler';
import { tempDir } from '../support/temp-dir';

const { missing } = helmBinary();
// A name of its own: the kit's webapp operator (dist/) is in the same cluster, and Helm refuses
// to take over objects it did not create.
const NAME = 'helm-webapp';

jest.setTimeout(180_000);

if (missing) test.todo(`helm install of an operator and a resource of its kind — skipped: ${missing}`);

(missing ? describe.skip : describe)('one helm install: the operator and a resource of its kind', () => {
  const dir = tempDir('opkit-chart-');
  const chart = path.join(dir, `${NAME}-operator`);
  const release = `res-${Math.random().toString(36).slice(2, 7)}`;
  const releaseNs = `helm-${release}`;
  const kubeconfig = testKubeconfig();
  let reconciler: ReconcilerProcess | undefined;

  beforeAll(() => {
    writeHelmChart(chart, { operator: { name: NAME, controllers: [webAppController] }, crdsDirectory: true });
    const values = path.join(dir, 'values.yaml');
    fs.writeFileSync(
      values,
      stringify({
        watchNamespaces: [releaseNs],
        customResources: [
          {
            apiVersion: 'apps.example.com/v1alpha1',
            kind: 'WebApp',
            metadata: { name: 'shop' },
            spec: { image: 'nginx:alpine', port: 80, replicas: 2, domain: 'shop.example.com' },
          },
        ],
      }),
    );
    helmOk(['install', release, chart, '-n', releaseNs, '--create-namespace', '-f', values], { kubeconfig });
  });

  afterAll(async () => {
    if (reconciler) await reconciler.stop();
    helm(['uninstall', release, '-n', releaseNs], { kubeconfig });
    kubectl(['delete', 'namespace', releaseNs, '--wait=false']);
  });

  test('the release holds the operator and the WebApp, its CRD from crds/', () => {
    const status = JSON.parse(helmOk(['status', release, '-n', releaseNs, '-o', 'json'], { kubeconfig }));
    expect(status.info.status).toBe('deployed');
    expect(getJson(['get', 'crd', 'webapps.apps.example.com']).status.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Established', status: 'True' })]),
    );
    const manifest = helmOk(['get', 'manifest', release, '-n', releaseNs], { kubeconfig });
    expect(manifest).toContain('kind: WebApp');
    expect(manifest).toContain(`name: ${NAME}-operator`);
    const webapp = getJson(['get', 'webapp', 'shop', '-n', releaseNs]);
    expect(webapp.metadata.annotations['meta.helm.sh/release-name']).toBe(release);
  });

  test('the installed reconciler, run with its args and its ServiceAccount, reconciles the WebApp the release made', async () => {
    reconciler = await startInstalledReconciler(releaseNs, `${NAME}-operator`);
    const child = await eventually(
      "the WebApp's Deployment",
      () => getJsonIfExists(['get', 'deployment', 'shop', '-n', releaseNs]),
      60_000,
    );
    expect(child.spec.replicas).toBe(2);
    expect(child.metadata.ownerReferences[0]).toMatchObject({ kind: 'WebApp', name: 'shop', controller: true });
  });
});
