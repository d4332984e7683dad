/**
 * A real Kubernetes control plane for tests, benchmarks and demos, in the spirit of
 * controller-runtime's envtest: etcd + kube-apiserver + kube-controller-manager on loopback,
 * with generated certificates, RBAC authorization, and a kubeconfig for an admin.
 *
 * Where the cluster comes from, in this order:
 *  1. OPKIT_KUBECONFIG: an existing cluster. (Never the user's KUBECONFIG, so a test run cannot
 *     touch a real cluster by accident.)
 *  2. KUBEBUILDER_ASSETS: a directory with prebuilt etcd, kube-apiserver (and, optionally,
 *     kube-controller-manager), the envtest convention.
 *  3. The cache outside the repository, keyed by version; filled on first use with the projects'
 *     release binaries, each checked against its published SHA-256 (release-binaries.ts;
 *     OPKIT_RELEASE_MIRROR for a mirror, OPKIT_RELEASE_DOWNLOAD=off to skip), or, where they
 *     cannot be fetched, by testing/build-control-plane.sh from their Go modules.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type EgressProxy, startEgressProxy } from './egress-proxy';
import { freePort } from './free-port';
import { startApiserver, waitForApiserver } from './plane/apiserver';
import { type SpareApiserver, startSpareApiserver } from './plane/spare-apiserver';
import { type ControlPlaneBinaries, downloadBinaries, resolveBinaries } from './plane/binaries';
import { startControllerManager } from './plane/controller-manager';
import { startEtcd } from './plane/etcd';
import { startNodes, startScheduler } from './plane/nodes';
import {
  componentKubeconfig,
  generateCertificates,
  generateClientCertificate,
  type PlaneTokens,
  REAL_NODE_NAME,
  writeKubeconfig,
  writeTokens,
} from './plane/pki';
import { log, processExitedIn, stopProcess, waitFor, waitForHealthz } from './plane/process';
import { takeBack, type NodeOwner } from './node/leftovers';
import { NODE_NETWORK } from './node/network';
import {
  claimNodeNetwork,
  type RealNode,
  realNodeFromEnvironment,
  realNodeUnavailable,
  resolveNodeBinaries,
  startRealNode,
} from './node/real-node';
import { parseJson, stringAt } from '../constructs/contract/json';

export { freePort };
export { type ControlPlaneBinaries, downloadBinaries, resolveBinaries } from './plane/binaries';
export type { SpareApiserver } from './plane/spare-apiserver';
export {
  CRASH_LOOP_LABEL,
  EXPANDABLE_STORAGE_CLASS,
  IMAGE_PULL_FAILURE_LABEL,
  RESIZE_HELD_ANNOTATION,
} from './plane/nodes';

/** A running (or borrowed) control plane. */
export interface ControlPlane {
  /** Path of an admin kubeconfig. */
  readonly kubeconfig: string;
  /** https://127.0.0.1:<port> */
  readonly server: string;
  /** The kube-apiserver's version, e.g. v1.33.13. */
  readonly version: string;
  /** Whether the harness started it (false for OPKIT_KUBECONFIG). */
  readonly owned: boolean;
  /** Where logs (and data) live; undefined for a borrowed cluster. */
  readonly workDir?: string;
  /** The audit log of every write request, when started with `audit: true`. */
  readonly auditLog?: string;
  /** The etcd client URL, for tests that compact etcd. */
  readonly etcdUrl?: string;
  /** The directory of the binaries it runs (and any tools beside them); undefined for a borrowed cluster. */
  readonly binDir?: string;
  /**
   * Whether pods run: a scheduler places them on simulated nodes (kwok), which mark them Running
   * and Ready, complete Jobs, and provision and bind claims of the default StorageClass.
   */
  readonly nodes: boolean;
  /** The real node, when started with `nodes: 'real'`: its name, and how to load an image into it. */
  readonly realNode?: RealNode;
  /**
   * The API server's only way to the network (webhooks, conversion), when the harness started it:
   * loopback, and Services routed to a local server; everything else refused at once and logged.
   * Undefined for a borrowed cluster.
   */
  readonly egress?: Pick<EgressProxy, 'log' | 'route'>;
  /**
   * Starts a spare API server: another kube-apiserver on the plane's etcd, on a port of its own,
   * which a test can restart while the plane's own serves the rest (testing/plane/spare-apiserver.ts).
   * Each call starts one; the plane's stop stops any still running. Undefined for a borrowed cluster.
   */
  readonly startSpareApiserver?: () => Promise<SpareApiserver>;
  /** Stops what the harness started; keeps the work dir (logs) when `keepLogs`. */
  stop(options?: { keepLogs?: boolean }): Promise<void>;
}

export interface StartOptions {
  /** Record every write request in an audit log (for tests that count writes). @default false */
  readonly audit?: boolean;
  /** Print progress to stderr. @default true */
  readonly verbose?: boolean;
  /** More kube-apiserver flags, e.g. `--watch-cache=false` so watches read etcd directly. @default none */
  readonly extraApiserverArgs?: readonly string[];
  /**
   * kube-apiserver feature gates to set, e.g. `{ ShardedListAndWatch: true }` (alpha in v1.36:
   * server-side sharded list and watch). A cluster from OPKIT_KUBECONFIG keeps its own. @default none
   */
  readonly featureGates?: Readonly<Record<string, boolean>>;
  /**
   * Start a control plane of its own even when OPKIT_KUBECONFIG names a cluster: for a test that
   * replaces what the other tests of the run share, e.g. an upgrade test installing a released
   * version's CRDs. @default false
   */
  readonly own?: boolean;
  /**
   * What runs pods: `simulated`, kwok's nodes (pods are marked Running and Ready, no container
   * runs); or `real`, one real node (containerd, runc, kubelet, kube-proxy) on a bridge of its own,
   * where containers really run — Linux and root only (testing/node/real-node.ts). A plane of its
   * own, unless OPKIT_KUBECONFIG names a cluster and OPKIT_REAL_NODE its real node (how a run
   * that started one lends it to a project's e2e test it runs). @default 'simulated'
   */
  readonly nodes?: 'simulated' | 'real';
  /**
   * With a real node: a Traefik binary (testing/build-traefik.sh), run beside the node as its
   * ingress controller; `realNode.ingress.url` is where it serves Ingresses. @default none
   */
  readonly ingressController?: string;
  /**
   * With a real node: a kube-router binary (testing/build-kube-router.sh), run beside the node as
   * its NetworkPolicy enforcer, so policies hold there as on a cluster whose network enforces them.
   * @default none (policies are stored, not enforced)
   */
  readonly networkPolicyEnforcer?: string;
}

/** A control plane from OPKIT_KUBECONFIG, or a fresh one started from binaries. */
export async function startControlPlane(options: StartOptions = {}): Promise<ControlPlane> {
  const verbose = options.verbose ?? true;
  const existing = process.env.OPKIT_KUBECONFIG;
  const real = options.nodes === 'real';
  // A run that started a real node hands it to what it runs (OPKIT_KUBECONFIG and OPKIT_REAL_NODE):
  // one real node per machine.
  const borrowedNode = real && existing ? realNodeFromEnvironment() : undefined;
  if (real && !borrowedNode) {
    const why = realNodeUnavailable();
    if (why) throw new Error(`startControlPlane({ nodes: 'real' }): ${why}`);
  }
  if (existing && !options.extraApiserverArgs?.length && !options.own && (!real || borrowedNode)) {
    log(verbose, `using the existing cluster in OPKIT_KUBECONFIG=${existing}`);
    return borrowedPlane(existing, borrowedNode);
  }
  const downloaded = await downloadBinaries(verbose);
  const resolved = resolveBinaries(verbose);
  const bins = downloaded ? { ...resolved, source: 'downloaded' } : resolved;
  log(verbose, `Kubernetes ${bins.version} (binaries: ${bins.source}, ${bins.dir})`);
  return startFromBinaries(bins, options);
}

/** A cluster the harness did not start (OPKIT_KUBECONFIG), and the real node lent with it. */
function borrowedPlane(kubeconfig: string, realNode: RealNode | undefined): ControlPlane {
  const kubectl = (args: string[]) =>
    execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8' });
  const version = stringAt(parseJson(kubectl(['version', '-o', 'json'])), 'serverVersion', 'gitVersion');
  if (!version) throw new Error(`kubectl version: no serverVersion.gitVersion from the cluster of ${kubeconfig}`);
  return {
    kubeconfig,
    server: kubectl(['config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}']),
    version,
    owned: false,
    nodes: kubectl(['get', 'nodes', '-o', 'name']).trim().length > 0,
    ...(realNode ? { realNode } : {}),
    stop: () => Promise.resolve(),
  };
}

function featureGateArgs(gates: Readonly<Record<string, boolean>> = {}): string[] {
  const pairs = Object.entries(gates).map(([gate, on]) => `${gate}=${on}`);
  return pairs.length ? [`--feature-gates=${pairs.join(',')}`] : [];
}

/** The plane being started: where it writes, and the processes to stop. */
interface Plane {
  readonly workDir: string;
  readonly certs: string;
  readonly logs: string;
  readonly procs: ChildProcess[];
  /** Run after the processes stop (e.g. taking back a real node's network and cgroups). */
  readonly cleanups: (() => void)[];
  readonly verbose: boolean;
}

function newPlane(verbose: boolean): Plane {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-control-plane-'));
  const plane = {
    workDir,
    certs: path.join(workDir, 'pki'),
    logs: path.join(workDir, 'logs'),
    procs: [],
    cleanups: [],
    verbose,
  };
  fs.mkdirSync(plane.certs);
  fs.mkdirSync(plane.logs);
  return plane;
}

/**
 * Stops the processes in reverse order, drops etcd's data, and the work dir unless `keepLogs` or
 * a process exited while waited on.
 */
async function stopPlane(plane: Plane, opts: { keepLogs?: boolean } = {}): Promise<void> {
  for (const p of [...plane.procs].reverse()) await stopProcess(p);
  for (const cleanup of plane.cleanups.splice(0).reverse()) cleanup();
  fs.rmSync(path.join(plane.workDir, 'etcd-data'), { recursive: true, force: true });
  // A process that exited while waited on failed a test naming these logs: they stay.
  const died = processExitedIn(plane.logs);
  if (!opts.keepLogs && !died) fs.rmSync(plane.workDir, { recursive: true, force: true });
  else log(plane.verbose || died, `logs kept in ${plane.logs}`);
}

/**
 * envtest's order: credentials, the egress proxy (the API server sends every webhook and Service
 * call through it), etcd, kube-apiserver, then what needs it — kube-controller-manager, the
 * scheduler and kwok's nodes — and last the default ServiceAccount pods need.
 */
async function startFromBinaries(bins: ControlPlaneBinaries, options: StartOptions): Promise<ControlPlane> {
  const started = Date.now();
  const plane = newPlane(options.verbose ?? true);
  const stop = (opts?: { keepLogs?: boolean }) => stopPlane(plane, opts);
  try {
    const node = options.nodes === 'real' ? claimRealNodeFor(plane, options.verbose ?? true) : undefined;
    const { address, tokens } = credentials(plane, node !== undefined);
    const { server, caFile, egress, etcd, apiserver, apiserverOptions } = await startApiserverOf(bins, plane, options, {
      address,
      tokens,
      realNode: node !== undefined,
    });
    await waitForApiserver(server, caFile, tokens.admin, plane);
    const kubeconfig = writeKubeconfig(
      path.join(plane.workDir, 'kubeconfig'),
      server,
      caFile,
      'opkit-admin',
      tokens.admin,
    );
    const running = { ...plane, server, kubeconfig };
    const realNode = node
      ? await startRealNodeOf(node, bins, tokens, {
          ...running,
          ingressController: options.ingressController,
          networkPolicyEnforcer: options.networkPolicyEnforcer,
        })
      : undefined;
    const nodes = realNode ? true : await startControllers(bins, tokens, running);
    log(
      plane.verbose,
      `ready in ${((Date.now() - started) / 1000).toFixed(1)}s at ${server} (work dir ${plane.workDir})`,
    );
    return {
      kubeconfig,
      server,
      version: bins.version,
      owned: true,
      workDir: plane.workDir,
      auditLog: apiserver.auditLog,
      etcdUrl: etcd.url,
      binDir: bins.dir,
      nodes,
      ...(realNode ? { realNode } : {}),
      egress: { log: egress.log, route: egress.route },
      startSpareApiserver: () =>
        startSpareApiserver({ ...plane, apiserver: apiserverOptions, caFile, adminToken: tokens.admin, kubeconfig }),
      stop,
    };
  } catch (err) {
    await stop({ keepLogs: true });
    throw err;
  }
}

/**
 * kube-controller-manager, then the scheduler and kwok's nodes, each where its binary exists;
 * waits for the default ServiceAccount. Resolves with whether pods run.
 */
async function startControllers(
  bins: ControlPlaneBinaries,
  tokens: PlaneTokens,
  plane: Plane & { readonly server: string; readonly kubeconfig: string },
): Promise<boolean> {
  const kcm = bins.kubeControllerManager;
  if (kcm) await startControllerManager(kcm, plane.server, tokens.controllerManager, plane);
  else
    log(
      plane.verbose,
      'no kube-controller-manager in KUBEBUILDER_ASSETS: no garbage collection or workload controllers',
    );
  const { kubeScheduler: scheduler, kwok } = bins;
  // Pods run only where the workload controllers, a scheduler and kwok's kubelets all are.
  const nodes = kcm !== undefined && scheduler !== undefined && kwok !== undefined;
  if (nodes) await startNodes({ scheduler, kwok }, tokens, plane);
  else
    log(
      plane.verbose,
      'no kube-scheduler or kwok: pods are never scheduled, and tests that need running pods are skipped',
    );
  // The "default" ServiceAccount must exist before pods can be created in "default".
  await waitFor(
    'default ServiceAccount',
    () => {
      try {
        execFileSync(
          'kubectl',
          ['--kubeconfig', plane.kubeconfig, 'get', 'serviceaccount', 'default', '-n', 'default'],
          {
            stdio: 'ignore',
          },
        );
        return true;
      } catch {
        return !kcm;
      }
    },
    plane.procs,
    60_000,
    plane.logs,
  );
  return nodes;
}

/** The egress proxy, etcd and kube-apiserver, listening on `address`. */
async function startApiserverOf(
  bins: ControlPlaneBinaries,
  plane: Plane,
  options: StartOptions,
  o: { readonly address: string; readonly tokens: PlaneTokens; readonly realNode: boolean },
) {
  const { address, tokens, realNode } = o;
  const apiPort = await freePort();
  const server = `https://${address}:${apiPort}`;
  const caFile = path.join(plane.certs, 'ca.crt');
  const egress = await startEgressProxy(
    path.join(plane.workDir, 'egress'),
    { server, caFile, token: tokens.admin },
    realNode ? { nodeNetwork: NODE_NETWORK.cidr } : {},
  );
  plane.procs.push(egress.process);
  const etcd = await startEtcd(bins.etcd, plane.workDir, plane.logs);
  plane.procs.push(etcd.process);
  const apiserverOptions = {
    bin: bins.kubeApiserver,
    address,
    etcdUrl: etcd.url,
    certs: plane.certs,
    logs: plane.logs,
    egressConfigFile: egress.configFile,
    audit: options.audit ?? false,
    extraArgs: [
      ...(realNode ? realNodeApiserverArgs(plane.certs) : []),
      ...featureGateArgs(options.featureGates),
      ...(options.extraApiserverArgs ?? []),
    ],
  };
  const apiserver = startApiserver({ ...apiserverOptions, port: apiPort });
  plane.procs.push(apiserver.process);
  return { server, caFile, egress, etcd, apiserver, apiserverOptions };
}

/**
 * The plane's certificates and tokens, and the address the API server listens on: with a real
 * node, the node's bridge (pods reach it there through the `kubernetes` Service), and a client
 * certificate of its own for calling the kubelet (logs, exec).
 */
function credentials(plane: Plane, realNode: boolean): { address: string; tokens: PlaneTokens } {
  const address = realNode ? NODE_NETWORK.gateway : '127.0.0.1';
  generateCertificates(plane.certs, realNode ? [address] : []);
  if (realNode) generateClientCertificate(plane.certs, 'kubelet-client', 'kube-apiserver-kubelet-client');
  return { address, tokens: writeTokens(plane.certs) };
}

/** A real node's binaries and claimed network, taken back when the plane stops. */
interface ClaimedNode {
  readonly bins: ReturnType<typeof resolveNodeBinaries>;
  readonly owner: NodeOwner;
}

function claimRealNodeFor(plane: Plane, verbose: boolean): ClaimedNode {
  const bins = resolveNodeBinaries(verbose);
  const owner = claimNodeNetwork(bins, plane.workDir);
  plane.cleanups.push(() => {
    takeBack(owner);
  });
  return { bins, owner };
}

function realNodeApiserverArgs(certs: string): string[] {
  return [
    // The `kubernetes` Service's endpoint is the advertised address, kept by a lease.
    '--endpoint-reconciler-type=lease',
    `--kubelet-client-certificate=${path.join(certs, 'kubelet-client.crt')}`,
    `--kubelet-client-key=${path.join(certs, 'kubelet-client.key')}`,
    '--kubelet-preferred-address-types=InternalIP',
  ];
}

/**
 * kube-controller-manager and the scheduler (no kwok: the scheduler would place pods on its nodes),
 * the rights of the kubelet's and the API server's users, then the real node.
 */
async function startRealNodeOf(
  node: ClaimedNode,
  bins: ControlPlaneBinaries,
  tokens: PlaneTokens,
  plane: Plane & {
    readonly server: string;
    readonly kubeconfig: string;
    readonly ingressController?: string;
    readonly networkPolicyEnforcer?: string;
  },
): Promise<RealNode> {
  const { kubeControllerManager: kcm, kubeScheduler: scheduler } = bins;
  if (!kcm || !scheduler) throw new Error('a real node needs kube-controller-manager and kube-scheduler');
  await startControllerManager(kcm, plane.server, tokens.controllerManager, plane);
  const schedulerPort = await startScheduler(scheduler, tokens.scheduler, plane);
  await waitForHealthz('kube-scheduler', schedulerPort, plane);
  execFileSync('kubectl', ['--kubeconfig', plane.kubeconfig, 'apply', '--server-side', '-f', '-'], {
    input: JSON.stringify(realNodeBindings()),
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  return startRealNode(node.bins, node.owner, {
    ...plane,
    adminKubeconfig: plane.kubeconfig,
    nodeKubeconfig: componentKubeconfig(plane.certs, plane.server, `system:node:${REAL_NODE_NAME}`, tokens.node),
    proxyKubeconfig: componentKubeconfig(plane.certs, plane.server, 'system:kube-proxy', tokens.proxy),
  });
}

/** The kubelet's rights as its node (RBAC here has no Node authorizer), and the API server's towards the kubelet. */
function realNodeBindings(): object {
  const binding = (name: string, role: string, user: string) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      binding('opkit:real-node', 'system:node', `system:node:${REAL_NODE_NAME}`),
      binding('opkit:apiserver-to-kubelet', 'system:kubelet-api-admin', 'kube-apiserver-kubelet-client'),
    ],
  };
}
