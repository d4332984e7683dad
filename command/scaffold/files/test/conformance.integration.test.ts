/**
 * Every kind of the operator proven a good operator by the kit's conformance checks
 * (`conformanceTest`, cdk8s-operator-kit/testing), its sample the example: Ready at its generation,
 * no write once settled nor after a restart, no update lost when its connections are cut or its
 * API server restarts, no object of someone else's taken over, quantities
 * spelled otherwise and invalid specs refused naming the field, its children gone with it, every
 * request granted by the RBAC the Operator construct makes. On a control plane of its own, whose
 * audit log shows what the reconciler did; a kind `create kind` adds is checked with the rest.
 * Each problem says what the kind did and where to look.
 */
import * as path from 'node:path';
import { Chart, Testing } from 'cdk8s';
import {
  type ConformanceReport,
  type ControlPlane,
  conformanceTest,
  startControlPlane,
} from 'cdk8s-operator-kit/testing';
import { controllers, samples } from '../controllers';

const CONTROLLERS = path.join(__dirname, '..', 'controllers.ts');
const kinds = controllers.map((c) => c.for.kind);
let controlPlane: Promise<ControlPlane>;
const runs = new Map<string, Promise<ConformanceReport>>();

beforeAll(() => {
  controlPlane = startControlPlane({ audit: true, own: true, verbose: false });
  // Each kind's samples, as dist/ has them.
  const chart = new Chart(Testing.app(), 'samples');
  for (const addSample of samples) addSample(chart);
  const objects = Testing.synth(chart);
  // Started together: the runs mostly wait (for rest, for the garbage collector).
  for (const kind of kinds) {
    const examples = objects.filter((o) => o.kind === kind);
    runs.set(
      kind,
      controlPlane.then((cp) => conformanceTest({ controlPlane: cp, controllers: CONTROLLERS, kind, examples })),
    );
  }
});

afterAll(async () => {
  await Promise.allSettled(runs.values());
  await (await controlPlane)?.stop();
}, 120_000);

test.each(kinds)(
  '%s passes the conformance checks',
  async (kind) => {
    const report = await runs.get(kind)!;
    expect(report.problems).toEqual([]);
  },
  600_000,
);
