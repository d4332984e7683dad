/**
 * Every version of the Greeting operator is an upgrade of the first release: the released
 * controllers run over Greetings, `plan` previews this version's before its CRD is applied, this
 * version replaces them, and it must write exactly what the plan said, lose nothing through
 * conversion, and leave every Greeting stored as v1.
 */
import * as path from 'node:path';
import { type ControlPlane, startControlPlane, upgradeTest } from 'cdk8s-operator-kit/testing';

jest.setTimeout(600_000);

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ audit: true, own: true, verbose: false });
});

afterAll(async () => {
  await cp?.stop();
});

test('Greeting v1alpha1 → v1, as planned', async () => {
  const report = await upgradeTest({
    controlPlane: cp,
    kind: 'Greeting',
    from: path.join(__dirname, 'released', 'greeting-v1alpha1.ts'),
    to: path.join(__dirname, '..', 'greeting.ts'),
    resources: [
      {
        apiVersion: 'platform.example.com/v1alpha1',
        kind: 'Greeting',
        metadata: { name: 'hello' },
        spec: { text: 'hello' },
      },
      { apiVersion: 'platform.example.com/v1alpha1', kind: 'Greeting', metadata: { name: 'hi' }, spec: { text: 'hi' } },
    ],
  });
  expect(report.problems).toEqual([]);
  expect(report.plan.crd).toMatchObject({ versionsAdded: ['v1'], storageVersion: { from: 'v1alpha1', to: 'v1' } });
  // The children keep their content; only their owner is named in its new version.
  expect(report.written).toEqual(['ConfigMap/hello', 'ConfigMap/hi', 'Deployment/hello', 'Deployment/hi']);
  expect(report.storedVersions).toEqual(['v1']);
});
