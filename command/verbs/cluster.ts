/** `cdk8s-operator-kit cluster`: a local control plane, until Ctrl-C. */
import * as os from 'node:os';
import { parseArgs } from 'node:util';
import { type ControlPlane, startControlPlane } from '../../testing/control-plane';
import { ingressControllerBinary } from '../../testing/node/ingress';
import { networkPolicyEnforcerBinary } from '../../testing/node/network-policies';
import { loadSampleImages, type SampleImagesLoaded } from '../../testing/node/sample-images';
import { type Verb, UsageError } from './verb';

export const clusterVerb: Verb = {
  help: `  cluster [--audit] [--real-node [--sample-images] [--ingress] [--network-policies] [--load <oci-archive>]...]
      Start a local Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
      kube-scheduler and kwok's simulated nodes; their release binaries fetched, SHA-256 checked
      and cached on first use, or built with Go where they cannot be fetched) and print its
      KUBECONFIG line. The API server's webhook and Service calls never leave this machine.
      --real-node: one real node instead (containerd, runc, kubelet, kube-proxy, cluster DNS
      and a default StorageClass, built with Go and cached; Linux and root), where containers
      really run, on a bridge with no way off this machine; --load imports an image archive
      (the image command's output) into it; --sample-images loads what the samples run
      (memcached, nginx:alpine, postgres:13 and busybox from Debian's packages, etcd from its
      build), so \`kubectl apply -f dist/samples/\` runs for real (docs/testing.md); --ingress
      serves Ingresses through Traefik (built from its Go module and cached) on loopback;
      --network-policies enforces NetworkPolicies on the node through kube-router's policy
      controller (built from its Go module and cached; needs ipset).
      Ctrl-C stops it, and takes back everything it made.
`,
  run: clusterCommand,
};

async function clusterCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      audit: { type: 'boolean', default: false },
      'real-node': { type: 'boolean', default: false },
      load: { type: 'string', multiple: true, default: [] },
      'sample-images': { type: 'boolean', default: false },
      ingress: { type: 'boolean', default: false },
      'network-policies': { type: 'boolean', default: false },
    },
  });
  for (const needsNode of ['load', 'sample-images', 'ingress', 'network-policies'] as const) {
    const given = values[needsNode];
    if ((Array.isArray(given) ? given.length > 0 : given) && !values['real-node'])
      throw new UsageError(`--${needsNode} needs --real-node`);
  }
  // Sharded list and watch (alpha in v1.36) on, as in the tests, so a sharded operator run here
  // receives only its share.
  const cp = await startControlPlane({
    audit: values.audit,
    featureGates: { ShardedListAndWatch: true },
    nodes: values['real-node'] ? 'real' : 'simulated',
    ingressController: values.ingress ? ingressControllerBinary(true) : undefined,
    networkPolicyEnforcer: values['network-policies'] ? networkPolicyEnforcerBinary(true) : undefined,
  });
  for (const archive of values.load) cp.realNode?.loadImage(archive);
  const samples =
    values['sample-images'] && cp.realNode
      ? loadSampleImages(cp.realNode, { binDir: cp.binDir, workDir: cp.workDir ?? os.tmpdir() })
      : undefined;
  process.stdout.write(summary(cp, samples));
  // Listeners stay on while stopping: under `npm run cluster` a Ctrl-C arrives twice (from the
  // terminal and forwarded by npm), and a second signal with no listener would end this process
  // before the control plane's processes and its directory are gone.
  let stopping = false;
  await new Promise<void>((resolve) => {
    const onSignal = () => {
      if (!stopping) resolve();
      stopping = true;
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  process.stdout.write('Stopping the control plane…\n');
  await cp.stop();
  return 0;
}

/** What was started, and the KUBECONFIG line to use it. */
function summary(cp: ControlPlane, samples: SampleImagesLoaded | undefined): string {
  const nodes = cp.realNode
    ? `A real node (${cp.realNode.name}): containers run; nothing they send leaves this machine.`
    : cp.nodes
      ? 'Simulated nodes (kwok): scheduled pods become Running and Ready, Jobs complete, claims bind.'
      : 'No nodes: pods stay Pending (kube-scheduler or kwok missing).';
  return [
    `Kubernetes ${cp.version} at ${cp.server}`,
    nodes,
    ...(samples ? [`Images the samples run, loaded: ${samples.names.join(', ')}.`] : []),
    ...(cp.realNode?.ingress
      ? [`Ingresses are served at ${cp.realNode.ingress.url} (send the Ingress's host: curl -H 'Host: <host>').`]
      : []),
    ...(cp.etcdUrl ? [`etcd at ${cp.etcdUrl}`] : []),
    ...(cp.egress
      ? [
          `Webhook and Service calls of the API server stay on this machine: anything else is refused (log: ${cp.egress.log}).`,
        ]
      : []),
    'In another terminal:',
    `export KUBECONFIG=${cp.kubeconfig}`,
    '',
  ].join('\n');
}
