/** `cdk8s-operator-kit render`: the children resources become, offline. */
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { liveResource, ownedChildren } from '../diff';
import { ClusterCrds } from '../served-version';
import { controllerOf, controllersFrom, readResources, renderDocuments, renderResources } from '../render';
import { type Verb, UsageError } from './verb';
import { againstCluster, CLUSTER_OPTIONS } from './against-cluster';

export const renderVerb: Verb = {
  help: `  render [--controllers <module>] [--status [--observed <objects.yaml>]...] <resource.yaml | kind/name>...
      Print the children each resource becomes, as YAML, offline: the CRD's defaults applied and
      its schema checked, then the declaration's render, as the reconciler does it. The module
      exports your declarations (default: the kit's own controllers). With --status, also the
      status it would show, from the observed objects given (children, pods; e.g. kubectl get
      -o yaml) or, without them, from the children as rendered. A <kind>/<name> is read from the
      cluster (--kubeconfig, --context, -n, as for diff), as diff reads it.
`,
  run: renderCommand,
};

async function renderCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      controllers: { type: 'string' },
      status: { type: 'boolean', default: false },
      observed: { type: 'string', multiple: true, default: [] },
      ...CLUSTER_OPTIONS,
    },
  });
  if (positionals.length === 0) throw new UsageError('render: give one or more resource files (YAML) or <kind>/<name>');
  const controllers = await controllersFrom(values.controllers);
  const observed = values.observed.flatMap((f) => readResources(f));
  const options = { status: values.status, observed };
  const live = positionals.filter((p) => !fs.existsSync(p));
  if (live.length === 0) {
    process.stdout.write(renderResources(positionals, controllers, options));
    return 0;
  }
  // A <kind>/<name> is read from the cluster (as diff reads it); files stay offline.
  return againstCluster('render', values, async (client, _controllers, config) => {
    const namespace = values.namespace ?? config.namespace ?? 'default';
    const cluster = new ClusterCrds(client);
    const fromCluster = await Promise.all(
      live.map(async (ref) => {
        const stored = await liveResource(cluster, controllers, ref, namespace);
        const decl = controllerOf(controllers, stored, ref);
        // Its children too, when its external step's facts are read from them (see observeExternal).
        const children = decl.observeExternal ? await ownedChildren(client, decl, stored) : undefined;
        return { where: `${ref} (${decl.for.apiVersion}, from the cluster)`, decl, stored, children };
      }),
    );
    const files = positionals.filter((p) => fs.existsSync(p));
    process.stdout.write(
      (files.length ? renderResources(files, controllers, options) : '') + renderDocuments(fromCluster, options),
    );
    return 0;
  });
}
