/**
 * An operator of the kit's examples (examples/<name>/), installed as a user installs theirs: its
 * charts applied with kubectl (the samples left out), and its own entry point run as its own
 * ServiceAccount, watching one new namespace.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { App } from 'cdk8s';
import { createTestNamespace, kubectlOk } from './kube';
import { ReconcilerProcess, serviceAccountKubeconfig } from './reconciler';

const ROOT = path.resolve(__dirname, '..', '..');

export interface ExampleOperator {
  /** The namespace it watches, made for the test. */
  readonly ns: string;
  readonly reconciler: ReconcilerProcess;
  /** What its charts synthesized (CRD, RBAC, Deployment, …). */
  readonly objects: any[];
}

/**
 * Installs `examples/<example>`'s operator (its app, synthesized to a temporary directory) and
 * starts its `main.ts` as the ServiceAccount `<example>-operator` of `<example>-system`.
 */
export async function startExampleOperator(options: {
  readonly example: string;
  readonly app: (outdir: string) => App;
  /** The CRD to wait for, e.g. `staticsites.sites.example.com`. */
  readonly crd: string;
  /** The controller's name, for `--controllers`. */
  readonly controller: string;
}): Promise<ExampleOperator> {
  const { example } = options;
  const app = options.app(fs.mkdtempSync(path.join(os.tmpdir(), `${example}-`)));
  const objects = app.charts.filter((c) => c.node.id !== 'samples').flatMap((c) => c.toJson());
  kubectlOk(['apply', '--server-side', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  });
  kubectlOk(['wait', '--for', 'condition=established', '--timeout=60s', `crd/${options.crd}`]);
  const ns = createTestNamespace(example);
  const reconciler = await startExampleReconciler({ example, controller: options.controller, ns });
  return { ns, reconciler, objects };
}

/** The example's reconciler (its `main.ts`) as its own ServiceAccount, watching `ns`: started again after a stop. */
export function startExampleReconciler(options: {
  readonly example: string;
  readonly controller: string;
  readonly ns: string;
  /** More flags for it. */
  readonly args?: readonly string[];
}): Promise<ReconcilerProcess> {
  const { example, controller, ns } = options;
  return ReconcilerProcess.start({
    kubeconfig: serviceAccountKubeconfig({ namespace: `${example}-system`, serviceAccount: `${example}-operator` }),
    entry: path.join(ROOT, 'examples', example, 'main.ts'),
    args: [`--controllers=${controller}`, `--namespace=${ns}`, ...(options.args ?? [])],
    name: `${example}-reconciler`,
  });
}
