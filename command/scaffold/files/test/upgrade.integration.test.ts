/**
 * The released operator (test/released/) upgraded to this version, on a control plane of its own
 * (it installs the released CRDs): the old reconciler runs over resources, `plan` previews this
 * version before its CRD is applied, this version replaces it, and it must write exactly what the
 * plan said, lose nothing through conversion, and leave every resource in the storage version.
 */
import * as path from 'node:path';
import { type ControlPlane, startControlPlane, upgradeTest } from 'cdk8s-operator-kit/testing';
import { webSiteKind } from '../kinds/web-site';

let controlPlane: ControlPlane;

beforeAll(async () => {
  controlPlane = await startControlPlane({ audit: true, own: true, verbose: false });
}, 600_000);

afterAll(async () => {
  await controlPlane?.stop();
});

test('the released WebSite operator upgrades to this version as planned, losing nothing', async () => {
  const report = await upgradeTest({
    controlPlane,
    kind: 'WebSite',
    from: path.join(__dirname, 'released', 'controllers.ts'),
    to: path.join(__dirname, '..', 'controllers.ts'),
    // Resources in each version the released CRD serves.
    resources: [
      {
        apiVersion: 'sites.example.com/v1alpha1',
        kind: 'WebSite',
        metadata: { name: 'upgraded' },
        spec: { replicas: 1 },
      },
    ],
  });
  expect(report.problems).toEqual([]);
  expect(report.storedVersions).toEqual([webSiteKind.storageVersion]);
}, 600_000);
