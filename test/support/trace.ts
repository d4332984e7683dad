/** The package's `trace` command as the integration tests run it, its table read back into rows. */
import { kubectlOk } from './kube';
import { runCommand } from './controllers-module';

/** One row of `trace`'s table: the object (its tree drawing taken off), its verdict and message. */
export interface TraceRow {
  readonly object: string;
  readonly ready: string;
  readonly reason: string;
  readonly message: string;
}

/** `cdk8s-operator-kit trace <ref> -n <ns> …`: its exit code, output and table rows. */
export function runTrace(
  ref: string,
  ns: string,
  extra: readonly string[] = [],
): { code: number | null; stdout: string; stderr: string; rows: TraceRow[] } {
  const run = runCommand(['trace', ref, '-n', ns, ...extra]);
  const rows = run.stdout
    .split('\n')
    .slice(1)
    .filter((l) => /^[│├└─ ]*[A-Za-z]+\//.test(l))
    .map((line) => {
      const [object = '', ready = '', reason = '', ...message] = line.replace(/^[│├└─ ]+/, '').split(/ {2,}/);
      return { object, ready, reason, message: message.join('  ') };
    });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr, rows };
}

/** A trace of a resource as asked: exit 0, nothing on standard error, these objects among its rows, every row Current. */
export function expectTracedReady(trace: ReturnType<typeof runTrace>, objects: readonly string[]): void {
  expect({ code: trace.code, stderr: trace.stderr }).toEqual({ code: 0, stderr: '' });
  expect(trace.rows.map((r) => r.object)).toEqual(expect.arrayContaining([...objects]));
  expect(trace.rows.filter((r) => r.ready !== 'Current')).toEqual([]);
}

/**
 * A StorageClass no provisioner serves: a claim of it stays Pending without an error (no
 * ProvisioningFailed Event), so what mounts it waits — a resource on its way, not broken.
 */
export const UNPROVISIONED_STORAGE_CLASS = 'opkit-unprovisioned';

export function applyUnprovisionedStorageClass(): void {
  kubectlOk(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: UNPROVISIONED_STORAGE_CLASS },
      provisioner: 'example.com/nobody',
      volumeBindingMode: 'Immediate',
    }),
  });
}
