/**
 * The Greeting proven a good operator by the kit's conformance checks (`conformanceTest`), its
 * sample — as app.ts adds it — the example: Ready at its generation, no write once settled nor
 * after a restart, no update lost when its connections are cut or its API server restarts, no
 * object of someone else's taken over, invalid specs refused naming the field, its children gone
 * with it, every request granted by the RBAC its operator construct makes. On a control plane of
 * its own, whose audit log shows what the reconciler did; each problem says what and where to look.
 */
import * as path from 'node:path';
import { type Chart, Testing } from 'cdk8s';
import { type ControlPlane, conformanceTest, startControlPlane } from 'cdk8s-operator-kit/testing';
import { platform } from '../app';

jest.setTimeout(600_000);

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ audit: true, own: true, verbose: false });
});

afterAll(async () => {
  await cp?.stop();
});

test('the Greeting passes the conformance checks, its sample the example', async () => {
  const app = Testing.app();
  platform(app);
  const samples = app.node.children.find((c) => c.node.id === 'samples') as Chart;
  const examples = Testing.synth(samples).filter((o) => o.kind === 'Greeting');
  expect(examples).toHaveLength(1);
  const report = await conformanceTest({
    controlPlane: cp,
    controllers: path.join(__dirname, '..', 'greeting.ts'),
    kind: 'Greeting',
    examples,
  });
  expect(report.problems).toEqual([]);
});
