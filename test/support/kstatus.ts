/**
 * kstatus, the readiness rules Helm 4's `--wait`, Flux's health checks, kpt and Config Sync judge
 * objects with (sigs.k8s.io/cli-utils/pkg/kstatus), as the real library: testing/kstatus/main.go
 * built from the Go module proxy by testing/build-kstatus.sh (cached outside the repository;
 * .ci/run builds it before the tests). The tiers' global set-ups provision it as they do helm.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

let built: { bin?: string; missing?: string } | undefined;

/** Builds (or finds cached) kstatus-check and tells the test files through the environment. */
export function provisionKstatus(): void {
  if (process.env.OPKIT_TEST_KSTATUS !== undefined) return;
  const { bin, missing } = kstatusBinary();
  process.env.OPKIT_TEST_KSTATUS = bin ?? '';
  if (missing) process.env.OPKIT_TEST_KSTATUS_MISSING = missing;
}

/** The kstatus-check binary, or why there is none. */
export function kstatusBinary(): { bin?: string; missing?: string } {
  if (built) return built;
  const provisioned = process.env.OPKIT_TEST_KSTATUS;
  if (provisioned !== undefined) {
    built = provisioned
      ? { bin: provisioned }
      : { missing: process.env.OPKIT_TEST_KSTATUS_MISSING ?? 'kstatus-check could not be built' };
    return built;
  }
  const r = spawnSync('bash', [path.join(ROOT, 'testing', 'build-kstatus.sh')], { encoding: 'utf8', timeout: 600_000 });
  built =
    r.status === 0
      ? { bin: r.stdout.trim().split('\n').pop() }
      : { missing: `kstatus-check could not be built: ${r.stderr.trim().split('\n').pop() ?? ''}` };
  return built;
}

/** What kstatus makes of one object (as the API server returns it). */
export interface KstatusVerdict {
  readonly kind: string;
  readonly name: string;
  readonly status: 'Current' | 'InProgress' | 'Failed' | 'Terminating' | 'NotFound' | 'Unknown';
  readonly message: string;
}

/** kstatus's verdict on each object given (an object, or a List of them). */
export function kstatus(object: object): KstatusVerdict[] {
  const { bin, missing } = kstatusBinary();
  if (!bin) throw new Error(missing);
  const r = spawnSync(bin, [], { input: JSON.stringify(object), encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`kstatus-check failed (${String(r.status)}): ${r.stderr}`);
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as KstatusVerdict);
}
