/**
 * Helm for the chart tests: built from its Go module by testing/build-helm.sh (cached outside the
 * repository; .ci/run builds it before the tests), or the reason it cannot be. The tiers' global
 * set-ups call `provisionHelm()` and pass the outcome to the test files, so the build (minutes on
 * a fresh machine) is part of the set-up, not of a test file's time.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { goTool } from './go-tool';

const HELM = goTool({ script: 'testing/build-helm.sh', env: 'OPKIT_TEST_HELM', what: 'helm' });
let home: string | undefined;

/** Builds (or finds cached) helm and tells the test files through the environment jest workers inherit. */
export function provisionHelm(): void {
  HELM.provision();
}

/** The helm binary, or why there is none. */
export function helmBinary(): { helm?: string; missing?: string } {
  const { bin, missing } = HELM.binary();
  return bin ? { helm: bin } : { missing };
}

/** Runs helm; its exit code and output. */
export function helm(
  args: string[],
  options: { kubeconfig?: string } = {},
): { code: number; stdout: string; stderr: string } {
  const bin = helmBinary().helm;
  if (!bin) throw new Error(helmBinary().missing);
  home ??= fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-helm-home-'));
  const r = spawnSync(bin, args, {
    encoding: 'utf8',
    timeout: 300_000,
    env: {
      ...process.env,
      // Helm's caches and repositories in a place of the test's own, never the user's.
      HELM_CACHE_HOME: path.join(home, 'cache'),
      HELM_CONFIG_HOME: path.join(home, 'config'),
      HELM_DATA_HOME: path.join(home, 'data'),
      ...(options.kubeconfig ? { KUBECONFIG: options.kubeconfig } : {}),
    },
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Runs helm; throws with its error output unless it succeeds. */
export function helmOk(args: string[], options: { kubeconfig?: string } = {}): string {
  const r = helm(args, options);
  if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}
