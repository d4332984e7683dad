#!/usr/bin/env node
/**
 * `cdk8s-operator-kit`: the package's command.
 *   init     a new operator project: a kind, its construct and controller, tests, the reconciler
 *   create   kind <Kind>: add a kind to such a project
 *   image    build a reconciler image (OCI archive) from an entry point, without a daemon
 *   bundle   bundle an entry point into one JavaScript file, as the image holds it
 *   cluster  a local control plane (etcd, kube-apiserver, controllers, simulated nodes)
 *   run      run an entry point's reconciler out of cluster, against $KUBECONFIG
 *   helm     the operator's Helm chart, from its controllers
 *   render   the children resources become, offline, through the code the reconciler runs
 *   diff     what the reconciler would change in a live cluster, by server-side dry runs
 *   plan     the same for every resource of a kind: what a new operator version would do
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { bundleReconciler } from './image/bundle';
import { buildImage, type BuiltImage } from './image/build';
import { NODE_RUNTIME } from './image/definition';
import { describeProject } from './image/project';
import { ImageBuildError } from './image/tools';
import type { ControllerDeclaration } from '../constructs/core/controller-declaration';
import { diffReport, diffResource, liveResource, ownedChildren } from './diff';
import { externalFactsUnknown } from '../operator/runtime/children';
import { forwardSignals } from './forward-signals';
import { type Plan, planChanges, planKind, planReport } from './plan';
import { crdChange, crdChangeReport, crdChanges } from './crd-change';
import { ClusterCrds } from './served-version';
import { HttpKubeClient, type ClusterConfig, loadKubeConfig } from '../operator/runtime/client';
import { isLoopbackServer, egressRoutesBeside } from '../operator/runtime/local';
import { chartNameOf, writeHelmChart } from '../constructs/helm/chart';
import {
  controllerOf,
  controllersFrom,
  loadControllers,
  readResources,
  RenderError,
  renderDocuments,
  renderResources,
  storedResource,
} from './render';
import { startControlPlane } from '../testing/control-plane';
import { createKind, initProject, ScaffoldError } from './scaffold';

/**
 * node:util parseArgs refusing the arguments (an unknown flag, a missing value). Not `instanceof
 * Error`: Node's own errors may come from another realm (a test's sandbox).
 */
function isParseArgsError(err: unknown): err is Error {
  return (
    typeof err === 'object' &&
    err !== null &&
    'code' in err &&
    typeof err.code === 'string' &&
    err.code.startsWith('ERR_PARSE_ARGS') &&
    'message' in err
  );
}
/** Each command's synopsis and what it does: its `--help`, and together the command's usage. */
export const COMMAND_HELP: Record<string, string> = {
  init: `  init [--name <package>] [--kind <Kind>] [--group <group>] [--version <v>] [--kit <spec>] [--image <repository>]
       [--namespaces <a,b>]
      Make a new operator project in this (empty) directory, offline: package.json, tsconfig,
      cdk8s.yaml, the operator's charts (app.ts, main.ts), its reconciler entry point
      (reconciler.ts), a kind with its construct and controller (kinds/), a unit test and an
      integration test against a real API server (test/), README. The kind defaults to the
      directory's name (website-operator: Website), its group to <kind>.example.com, its version
      to v1alpha1. --namespaces: the namespaces the operator serves (watchNamespaces: a Role in
      each, no rights elsewhere); without it, every namespace. Then: npm install && npm test.
`,
  create: `  create kind <Kind> --group <group> [--version <v>]
      Add a kind to a project made by init: kinds/<kind>.ts, its tests, and its controller and
      sample in controllers.ts.
`,
  image: `  image --entry <file> [--tag <image>] [--output <dir>] [--no-load] [--json]
      Build the reconciler image of an entry point that calls runOperator, as an OCI archive in
      <dir> (default build/image), without a container daemon or registry (needs mmdebstrap and
      buildah). The tag defaults to <package name>/reconciler:<package version>. The image is
      also loaded into podman's storage when podman is installed, unless --no-load.
`,
  bundle: `  bundle --entry <file> [--output <file>] [--no-minify]
      Bundle the entry point into one file (default build/reconciler/main.js) with esbuild.
`,
  cluster: `  cluster [--audit] [--real-node [--load <oci-archive>]...]
      Start a local Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
      kube-scheduler and kwok's simulated nodes; their release binaries fetched, SHA-256 checked
      and cached on first use, or built with Go where they cannot be fetched) and print its
      KUBECONFIG line. The API server's webhook and Service calls never leave this machine.
      --real-node: one real node instead (containerd, runc, kubelet, kube-proxy, built with Go
      and cached; Linux and root), where containers really run, on a bridge with no way off
      this machine; --load imports an image archive (the image command's output) into it.
      Ctrl-C stops it, and takes back everything it made.
`,
  run: `  run --entry <file> [-- <reconciler flags>]
      Bundle the entry point and run it here, out of cluster, against $KUBECONFIG (or
      --kubeconfig after --): the reconciler of your own controllers, without an image. Against
      the local control plane (cluster above), its webhooks are served on 127.0.0.1 and the
      webhook Services the CRDs call routed there (--webhook-loopback; add
      --webhook-configuration=<name>-webhook for admission hooks); the CRDs are not repointed,
      so kubectl apply --server-side -f dist/ and the Helm chart apply them again as they are.
      Its health, metrics and webhook endpoints take free loopback ports (logged as "serving …")
      unless given.
`,
  helm: `  helm --controllers <module> --name <operator> [--image <repository[:tag]>] [--version <v>] [--output <dir>]
      Write the Helm chart of the operator that runs these controllers (the module exports them),
      templated from its Operator construct, to <dir> (default build/helm/<chart name>): the
      CRDs (templates, following the release namespace; kept by helm uninstall; crds.install=false
      leaves them to you), RBAC, the reconciler's Deployment, its webhook Service and certificate
      Secret when it has webhooks. The chart is named as the operator (<name>, with -operator
      added unless it ends so). --version is the chart's (default 0.1.0).
`,
  render: `  render [--controllers <module>] [--status [--observed <objects.yaml>]...] <resource.yaml | kind/name>...
      Print the children each resource becomes, as YAML, offline: the CRD's defaults applied and
      its schema checked, then the declaration's render, as the reconciler does it. The module
      exports your declarations (default: the kit's own controllers). With --status, also the
      status it would show, from the observed objects given (children, pods; e.g. kubectl get
      -o yaml) or, without them, from the children as rendered. A <kind>/<name> is read from the
      cluster (--kubeconfig, --context, -n, as for diff), as diff reads it.
`,
  diff: `  diff [--controllers <module>] [-n <namespace>] [--field-manager <name>] <resource.yaml | kind/name>...
      What the reconciler would change in the cluster for each resource: what applying the
      controllers' CRD would change (once per kind), then per child created, changed (a unified
      diff of the live object and the server-side apply dry run), held (it waits for a child not
      ready yet), pruned or unchanged. A resource is read at a version the cluster serves and
      converted by the module's own conversion, so a new API version is previewed before its CRD
      is applied. Writes nothing. Exit 0: no differences, 1: differences, 2: an error.
`,
  plan: `  plan --kind <Kind> [-n <namespace> | -A] [--controllers <module>] [--concurrency <n>] [-o json]
      What these controllers (a new operator version) would do to every existing resource of a
      kind: what applying their CRD would change (versions, storage version, conversion, each
      version's schema by field, and what the API server would refuse), the resources the new
      schema refuses, totals, each distinct field change with how many children it touches, and
      the children the API server would refuse. Resources are read as diff reads them. Dry runs
      only for children whose owned fields would change (at most --concurrency at once, default
      8). Writes nothing. Exit codes as diff.

  render, diff and plan read the cluster of --kubeconfig <file> (default $KUBECONFIG, then
  ~/.kube/config) and --context <name> (default its current context); -n defaults to the
  context's namespace, then default.
`,
};

const USAGE = `Usage: cdk8s-operator-kit <command> [flags]   (cdk8s-operator-kit <command> --help for one)

Commands:
${Object.values(COMMAND_HELP).join('')}`;

const MiB = 1024 * 1024;

function report(image: BuiltImage): string {
  const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
  return [
    `${image.reference}  ${image.digest}`,
    `  archive: ${image.archive}`,
    ...image.layers.map((l) => `  layer ${l.digest.slice(7, 19)}: ${mib(l.size)} compressed, ${l.holds}`),
    `  holds: base system ${mib(image.contents.baseSystem)}, node ${NODE_RUNTIME.version} ${mib(image.contents.node)}, bundle ${mib(image.contents.bundle)}`,
    image.loaded ? `  loaded into podman's storage: podman run ${image.reference}` : '  not loaded (no podman)',
    '',
  ].join('\n');
}

async function imageCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      entry: { type: 'string' },
      tag: { type: 'string' },
      output: { type: 'string', default: path.join('build', 'image') },
      'no-load': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  if (!values.entry) throw new UsageError('image: --entry <file> is required');
  const cwd = process.cwd();
  const project = describeProject(cwd);
  const image = await buildImage({
    entry: values.entry,
    reference: values.tag ?? project.reference,
    description: project.description,
    outDir: values.output,
    cwd,
    load: !values['no-load'],
    log: values.json ? undefined : (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(values.json ? `${JSON.stringify(image, null, 2)}\n` : report(image));
  return 0;
}

async function bundleCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      entry: { type: 'string' },
      output: { type: 'string', default: path.join('build', 'reconciler', 'main.js') },
      'no-minify': { type: 'boolean', default: false },
    },
  });
  if (!values.entry) throw new UsageError('bundle: --entry <file> is required');
  const bytes = await bundleReconciler({ entry: values.entry, outfile: values.output, minify: !values['no-minify'] });
  process.stdout.write(`${values.output}: ${(bytes / MiB).toFixed(1)} MiB\n`);
  return 0;
}

async function clusterCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      audit: { type: 'boolean', default: false },
      'real-node': { type: 'boolean', default: false },
      load: { type: 'string', multiple: true, default: [] },
    },
  });
  if (values.load.length && !values['real-node']) throw new UsageError('--load needs --real-node');
  // Sharded list and watch (alpha in v1.36) on, as in the tests, so a sharded operator run here
  // receives only its share.
  const cp = await startControlPlane({
    audit: values.audit,
    featureGates: { ShardedListAndWatch: true },
    nodes: values['real-node'] ? 'real' : 'simulated',
  });
  for (const archive of values.load) cp.realNode?.loadImage(archive);
  process.stdout.write(
    [
      `Kubernetes ${cp.version} at ${cp.server}`,
      cp.realNode
        ? `A real node (${cp.realNode.name}): containers run; nothing they send leaves this machine.`
        : cp.nodes
          ? 'Simulated nodes (kwok): scheduled pods become Running and Ready, Jobs complete, claims bind.'
          : 'No nodes: pods stay Pending (kube-scheduler or kwok missing).',
      ...(cp.etcdUrl ? [`etcd at ${cp.etcdUrl}`] : []),
      ...(cp.egress
        ? [
            `Webhook and Service calls of the API server stay on this machine: anything else is refused (log: ${cp.egress.log}).`,
          ]
        : []),
      'In another terminal:',
      `export KUBECONFIG=${cp.kubeconfig}`,
      '',
    ].join('\n'),
  );
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

async function runCommand(args: string[]): Promise<number> {
  // --entry is run's own; every other flag is the reconciler's (a `--` before them is optional,
  // so `npm run operator -- --namespace=dev` passes through).
  const split = args.indexOf('--');
  const own = split >= 0 ? args.slice(0, split) : args;
  const passed: string[] = [];
  const values: { entry?: string } = {};
  for (let i = 0; i < own.length; i++) {
    const arg = own[i] ?? '';
    if (arg === '--entry') values.entry = own[++i];
    else if (arg.startsWith('--entry=')) values.entry = arg.slice('--entry='.length);
    else passed.push(arg);
  }
  if (split >= 0) passed.push(...args.slice(split + 1));
  if (!values.entry) throw new UsageError('run: --entry <file> is required');
  const outfile = path.join('build', 'run', 'main.js');
  await bundleReconciler({ entry: values.entry, outfile, minify: false });
  const reconcilerArgs = [
    ...passed,
    ...localEndpoints(passed),
    ...(wantsLoopbackWebhooks(passed) ? ['--webhook-loopback'] : []),
  ];
  // In a process group of its own: a terminal's Ctrl-C reaches the whole foreground group, and
  // the reconciler, signalled both by it and by the forward below, took the second signal as
  // "exit now" (exit 1, no graceful shutdown). It gets the signal once, from here.
  const child = spawn(process.execPath, ['--enable-source-maps', outfile, ...reconcilerArgs], {
    stdio: 'inherit',
    detached: true,
  });
  // The reconciler stops gracefully on the signal this command gets.
  forwardSignals(child);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

/**
 * Out of cluster, the health and metrics endpoints listen on loopback ports the kernel picks
 * (the reconciler logs them), unless the flags name one: the in-cluster defaults (:8080, :8081)
 * are ports that anything else on a developer's machine — a second reconciler, a test run beside
 * `npm run operator` — may already hold.
 */
export function localEndpoints(reconcilerArgs: readonly string[]): string[] {
  const given = (flag: string) => reconcilerArgs.some((a) => a === flag || a.startsWith(`${flag}=`));
  return ['--health-probe-bind-address', '--metrics-bind-address']
    .filter((f) => !given(f))
    .map((f) => `${f}=127.0.0.1:0`);
}

/**
 * Whether the reconciler should serve its webhooks on loopback, routed from their Services: against
 * the package's local control plane (its egress routes beside the kubeconfig), unless the flags
 * choose a certificate.
 */
function wantsLoopbackWebhooks(reconcilerArgs: readonly string[]): boolean {
  if (reconcilerArgs.some((a) => /^--webhook-(loopback|cert-path|cert-secret)\b/.test(a))) return false;
  const { values } = parseArgs({
    args: [...reconcilerArgs],
    options: { kubeconfig: { type: 'string' } },
    strict: false,
    allowPositionals: true,
  });
  const given = typeof values.kubeconfig === 'string' ? values.kubeconfig : undefined;
  try {
    return isLoopbackServer(loadKubeConfig({ path: given }).server) && egressRoutesBeside(given) !== undefined;
  } catch {
    // The reconciler says what is wrong with the kubeconfig, in one line.
    return false;
  }
}

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

/**
 * The flags of every command that reads a cluster, as kubectl spells them: which kubeconfig
 * (default $KUBECONFIG, then ~/.kube/config), which of its contexts, which namespace (default
 * the context's).
 */
const CLUSTER_OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  'field-manager': { type: 'string', default: 'cdk8s-operator-kit' },
} as const;

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
        differs ||= children.some((c) => c.verb !== 'unchanged');
        process.stdout.write(diffReport(resource, children));
      }
    }
    return differs ? 1 : 0;
  });
}

/**
 * Runs a command that reads a cluster (--kubeconfig and --context, as kubectl takes them) with
 * the given controllers, as `kubectl diff` ends: its own exit code (0 no differences, 1
 * differences), or 2 with one line for an error. The client names the command in its
 * User-Agent, so the audit log tells its (dry-run) requests from the reconciler's, and applies
 * as the reconciler's field manager.
 */
async function againstCluster(
  command: string,
  values: { controllers?: string; kubeconfig?: string; context?: string; 'field-manager': string },
  run: (
    client: HttpKubeClient,
    controllers: readonly ControllerDeclaration[],
    config: ClusterConfig,
  ) => Promise<number>,
): Promise<number> {
  try {
    const controllers = await controllersFrom(values.controllers);
    const config = loadKubeConfig({ path: values.kubeconfig, context: values.context });
    const client = new HttpKubeClient(config, {
      fieldManager: values['field-manager'],
      userAgent: `cdk8s-operator-kit-cli (${command})`,
    });
    try {
      return await run(client, controllers, config);
    } finally {
      client.close();
    }
  } catch (err) {
    process.stderr.write(`cdk8s-operator-kit: ${command}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
}

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

class UsageError extends Error {}

async function helmCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      controllers: { type: 'string' },
      name: { type: 'string' },
      image: { type: 'string' },
      version: { type: 'string' },
      output: { type: 'string' },
    },
  });
  if (!values.controllers) throw new UsageError('helm: --controllers <module> is required');
  if (!values.name) throw new UsageError('helm: --name <operator> is required (the name your Operator construct has)');
  const controllers = await loadControllers(values.controllers);
  const operator = { name: values.name, controllers, ...(values.image ? { image: values.image } : {}) };
  const dir = values.output ?? path.join('build', 'helm', chartNameOf(values.name));
  writeHelmChart(dir, { operator, version: values.version });
  process.stdout.write(`${dir}\n`);
  return 0;
}

function initCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      kind: { type: 'string' },
      group: { type: 'string' },
      version: { type: 'string' },
      kit: { type: 'string' },
      image: { type: 'string' },
      namespaces: { type: 'string' },
    },
  });
  if (positionals.length > 1) throw new UsageError('init: give at most one directory');
  const dir = positionals[0] ?? '.';
  const { namespaces, kit, ...names } = values;
  const watchNamespaces = namespaces?.split(',').map((n) => n.trim());
  const files = initProject(dir, { ...names, kitSpec: kit, watchNamespaces });
  process.stdout.write(
    [
      ...files.map((f) => `  wrote ${f}`),
      '',
      `Next${dir === '.' ? '' : `: cd ${dir} &&`} npm install && npm test; then npm run cluster and npm run operator (README.md).`,
      '',
    ].join('\n'),
  );
  return Promise.resolve(0);
}

function createCommand(args: string[]): Promise<number> {
  const [what, ...rest] = args;
  if (what !== 'kind') throw new UsageError('create: only "create kind <Kind> --group <group>" is known');
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { group: { type: 'string' }, version: { type: 'string' } },
  });
  const [kind] = positionals;
  if (!kind || positionals.length > 1) throw new UsageError('create kind: give one kind, e.g. create kind WebSite');
  if (!values.group) throw new UsageError('create kind: --group <group> is required, e.g. --group sites.example.com');
  const files = createKind('.', { kind, group: values.group, version: values.version });
  process.stdout.write(`${files.map((f) => `  wrote ${f}`).join('\n')}\n`);
  return Promise.resolve(0);
}

export const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  init: initCommand,
  create: createCommand,
  image: imageCommand,
  bundle: bundleCommand,
  cluster: clusterCommand,
  run: runCommand,
  helm: helmCommand,
  render: renderCommand,
  diff: diffCommand,
  plan: planCommand,
};

/** `--help` or `-h` among a command's own arguments (not after `--`, which `run` passes on to the reconciler). */
function asksForHelp(args: readonly string[]): boolean {
  const own = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
  return own.includes('--help') || own.includes('-h');
}

/** One command's usage, or every command's. */
function usageOf(command: string | undefined): string {
  const help = command === undefined ? undefined : COMMAND_HELP[command];
  return help ? `Usage: cdk8s-operator-kit ${help.trimStart()}` : USAGE;
}

/**
 * The exit code of a failure the user can act on — a usage error (2, with the command's usage) or
 * a failed build, render or scaffold (1), said in one line — or undefined for a failure of ours.
 */
function reportFailure(err: unknown, command: string): number | undefined {
  const usage = err instanceof UsageError || isParseArgsError(err);
  if (!usage && !(err instanceof ImageBuildError || err instanceof RenderError || err instanceof ScaffoldError))
    return undefined;
  process.stderr.write(`cdk8s-operator-kit: ${err.message}\n${usage ? `\n${usageOf(command)}` : ''}`);
  return usage ? 2 : 1;
}

/** Runs the command line; resolves to the exit code (2 for a usage error, 1 for a failed build). */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === 'help') {
    process.stdout.write(USAGE);
    return command ? 0 : 2;
  }
  const run = COMMANDS[command];
  if (run && asksForHelp(rest)) {
    process.stdout.write(usageOf(command));
    return 0;
  }
  try {
    if (!run) throw new UsageError(`unknown command "${command}"`);
    return await run(rest);
  } catch (err) {
    const code = reportFailure(err, command);
    if (code === undefined) throw err;
    return code;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
