/**
 * kstatus, the readiness rules Helm 4's `--wait`, Flux's health checks, kpt and Config Sync judge
 * objects with (sigs.k8s.io/cli-utils/pkg/kstatus), as the real library: testing/kstatus/main.go
 * built from the Go module proxy by testing/build-kstatus.sh (cached outside the repository;
 * .ci/run builds it before the tests). The tiers' global set-ups provision it as they do helm.
 */
import { spawnSync } from 'node:child_process';
import { goTool } from './go-tool';
import { getJson } from './kube';

const KSTATUS = goTool({ script: 'testing/build-kstatus.sh', env: 'OPKIT_TEST_KSTATUS', what: 'kstatus-check' });

/** Builds (or finds cached) kstatus-check and tells the test files through the environment. */
export function provisionKstatus(): void {
  KSTATUS.provision();
}

/** The kstatus-check binary, or why there is none. */
export function kstatusBinary(): { bin?: string; missing?: string } {
  return KSTATUS.binary();
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

/** kstatus's verdict on one object as the API server has it now (through kubectl). */
export function kstatusOf(kind: string, name: string, namespace: string): KstatusVerdict['status'] | undefined {
  return kstatus(getJson(['get', kind, name, '-n', namespace]))[0]?.status;
}
