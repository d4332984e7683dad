/**
 * operator-framework/api's bundle validators, as `operator-sdk bundle validate` runs them:
 * testing/olm-validate/main.go built from the Go module proxy by testing/build-olm-validate.sh
 * (cached outside the repository; .ci/run builds it before the tests). The integration tier's
 * global set-up provisions it as it does kstatus.
 */
import { spawnSync } from 'node:child_process';
import { goTool } from './go-tool';

const OLM_VALIDATE = goTool({
  script: 'testing/build-olm-validate.sh',
  env: 'OPKIT_TEST_OLM_VALIDATE',
  what: 'olm-validate',
});

/** Builds (or finds cached) olm-validate and tells the test files through the environment. */
export function provisionOlmValidate(): void {
  OLM_VALIDATE.provision();
}

/** One finding of the validators. */
export interface BundleFinding {
  readonly type: string;
  readonly name: string;
  readonly level: 'error' | 'warning';
  readonly message: string;
}

/** What the validators find in a bundle directory (manifests/ and metadata/), and their exit code. */
export function validateBundle(dir: string): { code: number | null; findings: BundleFinding[]; stderr: string } {
  const { bin, missing } = OLM_VALIDATE.binary();
  if (!bin) throw new Error(missing);
  const r = spawnSync(bin, [dir], { encoding: 'utf8', timeout: 120_000 });
  const findings = r.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as BundleFinding);
  return { code: r.status, findings, stderr: r.stderr };
}
