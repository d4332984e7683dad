/** `cdk8s-operator-kit trace`: a live resource, its children, their pods and claims, each with its verdict. */
import { parseArgs } from 'node:util';
import { liveResource } from '../diff';
import { controllerOf } from '../render';
import { ClusterCrds } from '../served-version';
import { traceDot, traceResource, traceTable } from '../trace';
import { type Verb, UsageError } from './verb';
import { againstCluster, CLUSTER_OPTIONS } from './against-cluster';

const OUTPUTS = ['text', 'wide', 'json', 'dot'];

export const traceVerb: Verb = {
  help: `  trace [--controllers <module>] [-n <namespace>] [-o wide|json|dot] <kind>/<name>
      One resource as a tree read from the cluster: the resource, the objects it controls, the
      pods of its workloads and the claims they mount, each with the verdict the reconciler
      reaches on it (READY Current, InProgress or Failed, with the reason and message of its
      health rule: a pod's container that cannot run and why, a StatefulSet whose claims are
      smaller than asked) — the resource's own by its conditions; a status that says Ready while
      a child is not is said too. -o wide adds each pod's node and prints messages whole; -o json
      the tree; -o dot Graphviz. Writes nothing. Exit 0: ready, 1: not ready, 2: an error.
`,
  run: traceCommand,
};

async function traceCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      controllers: { type: 'string' },
      output: { type: 'string', short: 'o', default: 'text' },
      ...CLUSTER_OPTIONS,
    },
  });
  if (positionals.length !== 1) throw new UsageError('trace: give one <kind>/<name>');
  if (!OUTPUTS.includes(values.output)) throw new UsageError('trace: -o must be wide, json or dot');
  const [target] = positionals as [string];
  return againstCluster('trace', values, async (client, controllers, config) => {
    const namespace = values.namespace ?? config.namespace ?? 'default';
    const resource = await liveResource(new ClusterCrds(client), controllers, target, namespace);
    const trace = await traceResource(client, controllerOf(controllers, resource, target), resource);
    const out =
      values.output === 'json'
        ? `${JSON.stringify(trace, null, 2)}\n`
        : values.output === 'dot'
          ? traceDot(trace)
          : traceTable(trace, values.output === 'wide');
    process.stdout.write(out);
    return trace.ready ? 0 : 1;
  });
}
