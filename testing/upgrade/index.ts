/**
 * An upgrade test: an operator's new version proven against the old one on a real API server
 * before it rolls out. The old controllers run over resources seeded in every version the old
 * CRD serves; `plan` previews the new controllers (before their CRD is applied); the new CRD is
 * applied and the new reconciler replaces the old; then the report says whether
 *
 * - the new reconciler wrote exactly the children the plan said (the audit log's writes), and
 *   in each changed child exactly the fields it said (the reconciler's own apply, before and after);
 * - every stored object reads back through every served version without loss (the new code's
 *   conversion, called by the API server);
 * - the storage migration trimmed `status.storedVersions` to the new storage version.
 *
 * @example
 * const report = await upgradeTest({
 *   controlPlane, // startControlPlane({ audit: true })
 *   kind: 'Greeting',
 *   from: 'test/upgrade/greeting-v1alpha1.ts', // the released version's controllers
 *   to: 'controllers.ts',
 *   resources: [{ apiVersion: 'platform.example.com/v1alpha1', kind: 'Greeting', metadata: { name: 'g' }, spec: { text: 'hi' } }],
 * });
 * expect(report.problems).toEqual([]);
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BuiltinTypes, type KubeObject } from '../../constructs/contract';
import { HttpKubeClient, loadKubeConfig } from '../../operator/runtime/client';
import type { ControlPlane } from '../control-plane';
import { compareWrites, type PlannedChange, roundTripProblems, snapshotChildren } from './compare';
import { applyCrd, kindIn, planWithCli, seed, settledResources, storedVersions } from './steps';
import { VersionReconciler } from './reconciler-process';
import { waitUntil } from './wait';
import { auditLength } from '../audit-log';

export interface UpgradeTestOptions {
  /** A control plane started with `audit: true` (the writes are read from its audit log). */
  readonly controlPlane: Pick<ControlPlane, 'kubeconfig' | 'auditLog'>;
  /** The kind upgraded, as `plan --kind` takes it. */
  readonly kind: string;
  /** A module exporting the controllers of the version running now. */
  readonly from: string;
  /** A module exporting the controllers of the new version. */
  readonly to: string;
  /** Resources to seed, in any version the old CRD serves (each with its apiVersion). */
  readonly resources: readonly KubeObject[];
  /** The namespace made for them (and for the webhook Service). @default `upgrade-<random>` */
  readonly namespace?: string;
  /** The reconciler's field manager, as `runOperator` is given it. @default 'cdk8s-operator-kit' */
  readonly fieldManager?: string;
}

export interface UpgradeReport {
  /** `plan -o json` of the new controllers, before the new CRD was applied. */
  readonly plan: { readonly changes: readonly PlannedChange[]; readonly resources: number } & Record<string, unknown>;
  /** `Kind/name` of each child the new reconciler wrote (created, patched or deleted). */
  readonly written: readonly string[];
  /** `status.storedVersions` once the new reconciler settled. */
  readonly storedVersions: readonly string[];
  /** What did not go as planned; empty when the upgrade did exactly what the plan said, losing nothing. */
  readonly problems: readonly string[];
}

/** Runs the upgrade of `options.kind` from one version of the controllers to the next; see the module. */
export async function upgradeTest(options: UpgradeTestOptions): Promise<UpgradeReport> {
  const { kubeconfig, auditLog } = options.controlPlane;
  if (!auditLog)
    throw new Error('upgradeTest reads the writes from the audit log: start the control plane with audit: true');
  const fieldManager = options.fieldManager ?? 'cdk8s-operator-kit';
  const [from, to] = [kindIn(options.from, options.kind), kindIn(options.to, options.kind)];
  const namespace = options.namespace ?? `upgrade-${Math.random().toString(36).slice(2, 8)}`;
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-upgrade-'));
  const client = new HttpKubeClient(loadKubeConfig({ path: kubeconfig }), {
    fieldManager: 'upgrade-test',
    userAgent: 'cdk8s-operator-kit-upgrade-test',
  });
  try {
    await client.create(BuiltinTypes.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await applyCrd(client, from, namespace);
    await seed(client, from, options.resources, namespace);
    await runVersion('old', options.from, { kubeconfig, workDir, kind: options.kind }, async (r) => {
      await settledResources(client, from, namespace);
      await r.settled(options.resources.length, 'the old version');
    });
    const before = await snapshotChildren(client, [from, to], namespace);
    const plan = planWithCli({ kubeconfig, controllers: options.to, kind: options.kind, namespace, fieldManager });
    await applyCrd(client, to, namespace);
    const mark = auditLength(auditLog);
    let stored: string[] = [];
    await runVersion('new', options.to, { kubeconfig, workDir, kind: options.kind }, async (r) => {
      await waitUntil(
        'storedVersions trimmed to the new storage version',
        async () => {
          stored = await storedVersions(client, to);
          return stored.length === 1 && stored[0] === to.for.storageVersion;
        },
        () => r.tail(),
      );
      await r.settled(options.resources.length, 'the new version');
    });
    const after = await snapshotChildren(client, [from, to], namespace);
    const writes = compareWrites({ plan, before, after, auditLog, mark, fieldManager, owned: [from, to] });
    const lost = await roundTripProblems(client, to, namespace);
    return { plan, written: writes.written, storedVersions: stored, problems: [...writes.problems, ...lost] };
  } finally {
    client.close();
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

/** Runs one version's reconciler while `during` runs, and stops it (it must stop cleanly). */
async function runVersion(
  name: string,
  controllers: string,
  where: { kubeconfig: string; workDir: string; kind: string },
  during: (r: VersionReconciler) => Promise<void>,
): Promise<void> {
  const reconciler = await VersionReconciler.start({ controllers, name, ...where });
  try {
    await during(reconciler);
  } catch (err) {
    await reconciler.stop();
    throw err;
  }
  const code = await reconciler.stop();
  if (code !== 0) throw new Error(`the ${name} reconciler exited ${String(code)}\n${reconciler.tail()}`);
}
