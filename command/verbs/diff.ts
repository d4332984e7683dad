/** `cdk8s-operator-kit diff`: what the reconciler would change in a live cluster. */
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { ControllerDeclaration } from '../../constructs/core/controller-declaration';
import { diffReport, diffResource, liveResource } from '../diff';
import { externalFactsUnknown } from '../../operator/runtime/children';
import { crdChange, crdChangeReport, crdChanges } from '../crd-change';
import { ClusterCrds } from '../served-version';
import { controllerOf, readResources, storedResource } from '../render';
import { type Verb, UsageError } from './verb';
import { againstCluster, CLUSTER_OPTIONS } from './against-cluster';

export const diffVerb: Verb = {
  help: `  diff [--controllers <module>] [-n <namespace>] [--field-manager <name>] <resource.yaml | kind/name>...
      What the reconciler would change in the cluster for each resource — its own plan, over
      what is in the cluster now: what applying the controllers' CRD would change (once per
      kind), then per child created, changed (a unified diff of the live object and the
      server-side apply dry run, and its other writes: claims grown, made again), held (it waits
      for a child not ready yet, or another child of the change would be refused), refused (the
      API server's words and the way through), pruned or unchanged, and each pod a stuck rollout
      waits on (or the kind's external step restarts) that it would delete (deleted); the write
      its external step would make to its outside system now (external: e.g. an etcd member
      added), or why that cannot be previewed from here (unknown). A resource is read at a version the cluster serves and
      converted by the module's own conversion, so a new API version is previewed before its CRD
      is applied. Writes nothing. Exit 0: no differences, 1: differences, 2: an error.
`,
  run: diffCommand,
};

async function diffCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { controllers: { type: 'string' }, ...CLUSTER_OPTIONS },
  });
  if (positionals.length === 0) throw new UsageError('diff: give resource files (YAML) or <kind>/<name>');
  return againstCluster('diff', values, async (client, controllers, config) => {
    const namespace = values.namespace ?? config.namespace ?? 'default';
    // Each kind's CRD read once: for its change report and for every resource's read.
    const cluster = new ClusterCrds(client);
    let differs = false;
    const kindsReported = new Set<ControllerDeclaration>();
    for (const target of positionals) {
      const resources = fs.existsSync(target)
        ? await Promise.all(readResources(target).map((r) => storedResource(cluster, controllers, r, namespace)))
        : [await liveResource(cluster, controllers, target, namespace)];
      for (const resource of resources) {
        const decl = controllerOf(controllers, resource, target);
        if (!kindsReported.has(decl)) {
          // Once per kind: what applying these controllers' CRD would change.
          kindsReported.add(decl);
          const crd = crdChange(await cluster.of(decl), decl);
          differs ||= crdChanges(crd);
          const unknown = externalFactsUnknown(decl);
          process.stdout.write(
            `${[...crdChangeReport(crd), ...(unknown ? [unknown] : [])].map((l) => `# ${l}`).join('\n')}\n`,
          );
        }
        const children = await diffResource(client, controllers, resource);
        // Not previewed is no difference: nothing is known of it.
        differs ||= children.some((c) => c.verb !== 'unchanged' && c.verb !== 'unknown');
        process.stdout.write(diffReport(resource, children));
      }
    }
    return differs ? 1 : 0;
  });
}
