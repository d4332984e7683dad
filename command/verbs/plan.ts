/** `cdk8s-operator-kit plan`: what a new operator version would do to every resource of a kind. */
import { parseArgs } from 'node:util';
import { externalFactsUnknown } from '../../operator/runtime/children';
import { type Plan, planChanges, planKind, planReport } from '../plan';
import { type Verb, UsageError } from './verb';
import { againstCluster, CLUSTER_OPTIONS } from './against-cluster';

export const planVerb: Verb = {
  help: `  plan --kind <Kind> [-n <namespace> | -A] [--controllers <module>] [--concurrency <n>] [-o json]
      What these controllers (a new operator version) would do to every existing resource of a
      kind: what applying their CRD would change (versions, storage version, conversion, each
      version's schema by field, and what the API server would refuse), the resources the new
      schema refuses, totals, each distinct field change with how many children it touches, and
      the children the API server would refuse, and every write the reconciler would make (each
      child's apply, claim grown, StatefulSet made again, prune, stuck pod deleted; -o json:
      writes), and the write each resource's external step would make to its outside system now
      (an etcd member added, say), or why it cannot be previewed from here (-o json: external).
      Resources are read as diff reads them. Dry runs
      only for children whose owned fields would change (at most --concurrency at once, default
      8). Writes nothing. Exit codes as diff.

  render, diff and plan read the cluster of --kubeconfig <file> (default $KUBECONFIG, then
  ~/.kube/config) and --context <name> (default its current context); -n defaults to the
  context's namespace, then default.
`,
  run: planCommand,
};

async function planCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      kind: { type: 'string' },
      controllers: { type: 'string' },
      'all-namespaces': { type: 'boolean', short: 'A', default: false },
      concurrency: { type: 'string', default: '8' },
      output: { type: 'string', short: 'o', default: 'text' },
      ...CLUSTER_OPTIONS,
    },
  });
  if (!values.kind) throw new UsageError('plan: --kind <Kind> is required');
  if (!values['all-namespaces'] && !values.namespace) throw new UsageError('plan: give -n <namespace> or -A');
  if (!['text', 'json'].includes(values.output)) throw new UsageError('plan: -o must be text or json');
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new UsageError('plan: --concurrency must be at least 1');
  const progress = process.stderr.isTTY
    ? (done: number, total: number) => process.stderr.write(`\rplan: ${done}/${total} resources`)
    : undefined;
  return againstCluster('plan', values, async (client, controllers) => {
    let plan: Plan;
    try {
      plan = await planKind(client, controllers, {
        kind: values.kind ?? '',
        namespace: values['all-namespaces'] ? undefined : values.namespace,
        concurrency,
        onProgress: progress,
      });
    } finally {
      if (progress) process.stderr.write('\n');
    }
    const unknown = controllers.find((c) => c.for.kind === plan.kind);
    const note = unknown && externalFactsUnknown(unknown);
    if (note) process.stderr.write(`plan: ${note}\n`);
    process.stdout.write(values.output === 'json' ? `${JSON.stringify(plan, null, 2)}\n` : planReport(plan));
    return planChanges(plan) ? 1 : 0;
  });
}
