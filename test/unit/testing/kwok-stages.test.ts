import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { HARNESS_KWOK_STAGES, KWOK_STAGES } from '../../../testing/kwok-stages';

const TESTING = path.join(__dirname, '../../../testing');

interface Stage {
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly resourceRef: { readonly kind: string };
    readonly steps: readonly { readonly patch?: { readonly root?: string; readonly template: string } }[];
  };
}

/** Every stage of the harness's own files. */
const harnessStages = (): Stage[] =>
  HARNESS_KWOK_STAGES.flatMap((file) =>
    parseAllDocuments(fs.readFileSync(path.join(TESTING, file), 'utf8')).map((doc) => doc.toJS() as Stage),
  );

describe('the kwok stages the control plane runs', () => {
  test("claims are provisioned by the harness's stage, not kwok's (which patches a claim by name only)", () => {
    expect(KWOK_STAGES).not.toContain('volume/fast/pvc-provision.yaml');
    const provisioning = harnessStages().filter(
      (s) => s.spec.resourceRef.kind === 'PersistentVolumeClaim' && s.metadata.name.startsWith('pvc-provision'),
    );
    expect(provisioning.map((s) => s.metadata.name)).toEqual(['pvc-provision-by-uid']);
  });

  test("every patch a claim's provisioning makes names the claim's uid, so a step played for a predecessor of its name is refused", () => {
    const stage = harnessStages().find((s) => s.metadata.name === 'pvc-provision-by-uid')!;
    const patches = stage.spec.steps.flatMap((step) => (step.patch ? [step.patch] : []));
    expect(patches.length).toBeGreaterThanOrEqual(2);
    for (const patch of patches) {
      // No root: the template is the whole patch, metadata beside what it sets.
      expect(patch.root).toBeUndefined();
      expect(patch.template).toMatch(/^metadata:\n {2}uid: \{\{ \.metadata\.uid \| Quote \}\}\n/);
    }
  });
});
