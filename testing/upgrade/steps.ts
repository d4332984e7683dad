/** The steps of an upgrade test that talk to the API server or run the package's command. */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { App, Chart } from 'cdk8s';
import {
  BuiltinTypes,
  chartObjects,
  type ControllerDeclaration,
  type CustomResourceObject,
  customResourceType,
  declarationsIn,
  type KubeObject,
} from '../../constructs/contract';
import { CONVERSION_PATH } from '../../constructs/contract/webhook-paths';
import { CustomResourceDefinition, CustomResourceKind } from '../../constructs';
import type { KubeClient } from '../../operator/runtime/client';
import type { PlannedChange } from './compare';
import { waitUntil } from './wait';

export { declarationsIn };

/** The declaration of a kind in a module of controllers. */
export function kindIn(module: string, kind: string): ControllerDeclaration {
  // Loaded as the test runner loads the test's own modules (ts-jest, tsx): a TypeScript module as it is.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the test runner's own loader, TypeScript included
  const exports = require(path.resolve(module)) as Record<string, unknown>;
  const decl = declarationsIn(exports).find((d) => d.for.kind === kind);
  if (!decl) throw new Error(`${module} exports no controller of ${kind}`);
  return decl;
}

/** The Service the CRD's conversion calls: routed to the running reconciler by the control plane. */
export const WEBHOOK_SERVICE = 'upgrade-test-webhook';

/**
 * Applies the CRD a version's kind defines, as its Operator construct makes it (conversion
 * through the webhook Service in `namespace`, which is made too), and waits until it is served.
 */
export async function applyCrd(client: KubeClient, decl: ControllerDeclaration, namespace: string): Promise<void> {
  const kind = decl.for;
  if (!isCustomResourceKind(kind))
    throw new Error(`${kind.kind}: its controller's kind is not a CustomResourceKind, so it has no CRD to apply`);
  const chart = new Chart(new App({ outdir: path.join(process.cwd(), 'build') }), 'upgrade');
  new CustomResourceDefinition(chart, 'crd', {
    kind,
    conversionWebhook: kind.needsConversion
      ? { service: { name: WEBHOOK_SERVICE, namespace, path: CONVERSION_PATH, port: 443 } }
      : undefined,
  });
  const [crd] = chartObjects(chart);
  if (!crd) throw new Error(`no CRD for ${kind.kind}`);
  await client.apply(BuiltinTypes.Service, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: WEBHOOK_SERVICE, namespace },
    spec: { ports: [{ port: 443, targetPort: 9443 }] },
  });
  await client.apply(BuiltinTypes.CustomResourceDefinition, crd, { force: true });
  await waitUntil(`CRD ${kind.crdName} served as ${kind.versions.join(', ')}`, async () => {
    const live = await client.get(BuiltinTypes.CustomResourceDefinition, kind.crdName);
    const established = live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    const versions = (live.spec?.versions ?? []).map((v) => v.name);
    return established && kind.versions.every((v) => versions.includes(v));
  });
}

function isCustomResourceKind(k: ControllerDeclaration['for']): k is CustomResourceKind {
  return k instanceof CustomResourceKind;
}

/**
 * Creates the seeded resources, each of the kind upgraded, in its own version (one the released
 * CRD serves), in `namespace`.
 */
export async function seed(
  client: KubeClient,
  decl: ControllerDeclaration,
  resources: readonly KubeObject[],
  namespace: string,
): Promise<void> {
  const k = decl.for;
  for (const r of resources) {
    const [group, version = ''] = (r.apiVersion ?? '').split('/');
    if (group !== k.group || r.kind !== k.kind || !k.versions.includes(version))
      throw new Error(
        `seeded ${r.apiVersion ?? ''} ${r.kind ?? ''} ${r.metadata.name ?? ''}: give ${k.kind}s of a version the released CRD serves (${k.versions.map((v) => `${k.group}/${v}`).join(', ')})`,
      );
    await client.create(customResourceType(k, version), r, namespace);
  }
}

/** A resource as a reconcile leaves it: its spec unread here, conditions in its status. */
type Reconciled = CustomResourceObject<unknown, { conditions?: { observedGeneration?: number }[] }>;

/** Until every resource of the kind in `namespace` has conditions for its current generation. */
export async function settledResources(
  client: KubeClient,
  decl: ControllerDeclaration,
  namespace: string,
): Promise<void> {
  await waitUntil(`every ${decl.for.kind} reconciled`, async () => {
    const list = await client.list(customResourceType<Reconciled>(decl.for), namespace);
    return list.items.every((r) => {
      const conditions = r.status?.conditions;
      return conditions?.length && conditions.every((c) => c.observedGeneration === r.metadata.generation);
    });
  });
}

/** `status.storedVersions` of the kind's CRD. */
export async function storedVersions(client: KubeClient, decl: ControllerDeclaration): Promise<string[]> {
  const crd = await client.get(BuiltinTypes.CustomResourceDefinition, decl.for.crdName);
  return [...(crd.status?.storedVersions ?? [])];
}

/** The package's command beside this module (sources under tsx, or the compiled package). */
function commandLine(): string[] {
  const ts = __filename.endsWith('.ts');
  const cli = path.join(__dirname, '..', '..', 'command', ts ? 'cli.ts' : 'cli.js');
  return ts ? ['--import', 'tsx', cli] : [cli];
}

/** `cdk8s-operator-kit plan -o json` of the new controllers, as a user runs it. */
export function planWithCli(o: {
  kubeconfig: string;
  controllers: string;
  kind: string;
  namespace: string;
  fieldManager: string;
}): { changes: readonly PlannedChange[]; resources: number } & Record<string, unknown> {
  const args = ['plan', '--kind', o.kind, '-n', o.namespace, '--controllers', o.controllers, '-o', 'json'];
  const r = spawnSync(
    process.execPath,
    [...commandLine(), ...args, '--kubeconfig', o.kubeconfig, '--field-manager', o.fieldManager],
    { encoding: 'utf8', env: { ...process.env, KUBECONFIG: '' }, timeout: 300_000 },
  );
  if (r.status !== 0 && r.status !== 1) throw new Error(`plan failed (exit ${String(r.status)}): ${r.stderr}`);
  return JSON.parse(r.stdout) as { changes: PlannedChange[]; resources: number };
}
