/**
 * One real node beside the control plane: containerd (with Debian's runc and the CNI bridge of
 * network.ts), a kubelet and kube-proxy, cluster DNS (cluster-dns.ts) and a default StorageClass
 * (local-storage.ts), so that pods really run — the operator's own image
 * among them. Linux and root only; `realNodeUnavailable()` says why not elsewhere.
 *
 * Facts of these machines it is built on (../shared/DESIGN.md §9): cgroup v1 with the cgroupfs
 * driver (`failCgroupV1: false`, runc's `SystemdCgroup = false`); root without CAP_SYS_RESOURCE, so
 * containerd must not raise a container's oom_score_adj (`restrict_oom_score_adj`); a node IP on a
 * bridge (a loopback one is refused); the sandbox image pinned locally (nothing is pulled).
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runBuildScript } from '../build-script';
import { freePort } from '../free-port';
import { REAL_NODE_NAME } from '../plane/pki';
import { startProcess, waitFor } from '../plane/process';
import { absentDirs, claimRealNode, type NodeOwner, recordOwner } from './leftovers';
import { CLUSTER_DNS, startClusterDns } from './cluster-dns';
import { type IngressController, startIngressController } from './ingress';
import { startNetworkPolicyEnforcer } from './network-policies';
import { startLocalStorage } from './local-storage';
import { registryLog, startNodeRegistry } from './registry';
import { cniConfig, createNodeNetwork, NODE_NETWORK } from './network';
import { archiveImageNames, BUSYBOX, normalisedImageName } from './images';
import { writeOciArchive } from './oci-archive';
import { conditionTrue, parseJson, stringAt } from '../../constructs/contract/json';

export const NODE_NAME = REAL_NODE_NAME;
export const PAUSE_IMAGE = 'opkit.local/pause:1';
/** Debian's runc (crun refuses containerd 2.4's OCI spec). */
const RUNC = '/usr/sbin/runc';

/** The binaries testing/build-node.sh leaves in its cache directory. */
export interface NodeBinaries {
  readonly dir: string;
}

/** Why a real node cannot run here, or undefined when it can. */
export function realNodeUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `a real node needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'a real node needs root (it makes a bridge, iptables rules and cgroups)';
  if (!fs.existsSync(RUNC)) return `a real node needs runc at ${RUNC} (apt-get install runc)`;
  if (!fs.existsSync(BUSYBOX))
    return `a real node's volume helper needs busybox at ${BUSYBOX} (apt-get install busybox-static)`;
  if (!fs.existsSync('/proc/sys/net/bridge'))
    return 'a real node needs the br_netfilter module (modprobe br_netfilter)';
  return undefined;
}

/** What the node needs of the plane it joins. */
export interface PlaneForRealNode {
  readonly server: string;
  readonly workDir: string;
  readonly certs: string;
  readonly logs: string;
  readonly procs: ChildProcess[];
  /** Run after the processes stop. */
  readonly cleanups: (() => void)[];
  readonly adminKubeconfig: string;
  readonly nodeKubeconfig: string;
  readonly proxyKubeconfig: string;
  /** A Traefik binary: the node serves Ingresses through it (testing/node/ingress.ts). @default none */
  readonly ingressController?: string;
  /** A kube-router binary: the node enforces NetworkPolicies through it (testing/node/network-policies.ts). @default none */
  readonly networkPolicyEnforcer?: string;
}

/** What another process needs to use a running real node: `OPKIT_REAL_NODE`, as JSON. */
export interface RealNodeAccess {
  readonly name: string;
  /** The node's containerd socket. */
  readonly containerdSocket: string;
  /** containerd's `ctr`, which imports images through that socket. */
  readonly ctr: string;
}

export interface RealNode {
  readonly name: string;
  /** Imports an OCI archive (e.g. the kit's `image` command's output) into the node's image store. */
  loadImage(archive: string): void;
  /** The containerd socket, for `ctr --address`. */
  readonly containerdSocket: string;
  /** For another process using this node (e.g. a project's e2e test run inside this run). */
  readonly access: RealNodeAccess;
  /** Its ingress controller, when the plane was given one (`StartOptions.ingressController`). */
  readonly ingress?: IngressController;
}

/** A running real node, from what `access` says of it. */
export function realNodeOf(access: RealNodeAccess): RealNode {
  const ctr = (args: string[]) =>
    execFileSync(access.ctr, ['--address', access.containerdSocket, '-n', 'k8s.io', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
    });
  return {
    name: access.name,
    containerdSocket: access.containerdSocket,
    access,
    loadImage: (archive) => {
      ctr(['images', 'import', archive]);
      for (const name of archiveImageNames(archive)) {
        const full = normalisedImageName(name);
        if (full !== name) ctr(['images', 'tag', '--force', name, full]);
      }
    },
  };
}

/** `OPKIT_REAL_NODE`'s node, when it names one. */
export function realNodeFromEnvironment(env: NodeJS.ProcessEnv = process.env): RealNode | undefined {
  const text = env.OPKIT_REAL_NODE;
  if (!text) return undefined;
  const access = parseJson(text);
  const [name, containerdSocket, ctr] = [
    stringAt(access, 'name'),
    stringAt(access, 'containerdSocket'),
    stringAt(access, 'ctr'),
  ];
  if (name === undefined || containerdSocket === undefined || ctr === undefined)
    throw new Error('OPKIT_REAL_NODE: give {"name", "containerdSocket", "ctr"} as JSON');
  return realNodeOf({ name, containerdSocket, ctr });
}

/** The node's binaries, from the cache or built by testing/build-node.sh. */
export function resolveNodeBinaries(verbose = true): NodeBinaries {
  return { dir: runBuildScript('build-node.sh', verbose) };
}

/**
 * Claims the machine's real node (taking back what a crashed run left) and makes its network, in
 * `<workDir>/node`: before the API server starts, which listens on the node's bridge.
 */
export function claimNodeNetwork(bins: NodeBinaries, workDir: string): NodeOwner {
  claimRealNode();
  const owner: NodeOwner = {
    pid: process.pid,
    workDir: path.join(workDir, 'node'),
    kubeProxy: path.join(bins.dir, 'kube-proxy'),
    // Read after what a crashed run left was taken back.
    madeDirs: absentDirs(),
  };
  recordOwner(owner);
  fs.mkdirSync(owner.workDir, { recursive: true });
  createNodeNetwork();
  return owner;
}

/** Starts containerd, the kubelet and kube-proxy on the claimed node; resolves once the Node is Ready. */
export async function startRealNode(bins: NodeBinaries, owner: NodeOwner, plane: PlaneForRealNode): Promise<RealNode> {
  const dir = owner.workDir;
  const containerdSocket = path.join(dir, 'containerd.sock');
  // Stopped with the plane, which then takes back what the node made (also after a failed start).
  const procs = plane.procs;
  const ctrBin = path.join(bins.dir, 'ctr');
  // The node's images, served to its own containerd for the pulls a pod's pull policy makes.
  const registry = await startNodeRegistry({ ctr: ctrBin, containerdSocket, log: registryLog(dir) });
  plane.cleanups.push(() => {
    void registry.close();
  });
  procs.push(startContainerd(bins, dir, plane.logs, registry.address));
  const node = realNodeOf({ name: NODE_NAME, containerdSocket, ctr: ctrBin });
  const answers = () => {
    try {
      execFileSync(node.access.ctr, ['--address', containerdSocket, 'version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  await waitFor('containerd', answers, procs, 30_000, plane.logs);
  node.loadImage(
    writeOciArchive(
      { name: PAUSE_IMAGE, files: { '/pause': path.join(bins.dir, 'pause') }, entrypoint: ['/pause'] },
      path.join(dir, 'pause.tar'),
    ),
  );
  // Cluster DNS before the kubelet, so the first pod already resolves Services by name.
  await startClusterDns(path.join(bins.dir, 'coredns'), dir, plane);
  procs.push(await startKubelet(bins, dir, containerdSocket, plane));
  procs.push(await startKubeProxy(bins, dir, plane));
  await waitFor(`node ${NODE_NAME} Ready`, () => nodeReady(plane.adminKubeconfig), plane.procs, 60_000, plane.logs);
  // Policies enforced before the first pod of a test runs, as a cluster's network would.
  if (plane.networkPolicyEnforcer) await startNetworkPolicyEnforcer(plane.networkPolicyEnforcer, NODE_NAME, plane);
  // A default StorageClass whose claims bind, once there is a node for its helper pods.
  await startLocalStorage(
    path.join(bins.dir, 'local-path-provisioner'),
    dir,
    (archive) => {
      node.loadImage(archive);
    },
    plane,
  );
  if (!plane.ingressController) return node;
  return { ...node, ingress: await startIngressController(plane.ingressController, dir, plane) };
}

function nodeReady(kubeconfig: string): boolean {
  try {
    const node = parseJson(
      execFileSync('kubectl', ['--kubeconfig', kubeconfig, 'get', 'node', NODE_NAME, '-o', 'json'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    );
    return conditionTrue(node, 'Ready');
  } catch {
    return false;
  }
}

function startContainerd(bins: NodeBinaries, dir: string, logs: string, registry: string): ChildProcess {
  const cniDir = path.join(dir, 'cni');
  fs.mkdirSync(cniDir, { recursive: true });
  fs.writeFileSync(
    path.join(cniDir, '10-opkit-node.conflist'),
    JSON.stringify(cniConfig(path.join(dir, 'cni-ipam')), null, 2),
  );
  const config = path.join(dir, 'containerd.toml');
  fs.writeFileSync(config, containerdConfig(bins, dir, cniDir, registry));
  // containerd finds its runc shim on PATH.
  const env = { ...process.env, PATH: `${bins.dir}:${process.env.PATH ?? ''}` };
  return startProcess(path.join(bins.dir, 'containerd'), ['--config', config], path.join(logs, 'containerd.log'), env);
}

/**
 * Every registry host, for every image a pod names, is the node's own registry on loopback
 * (registry.ts): what the node holds is pulled from there, and an image it does not hold fails at
 * once (ErrImagePull, then ImagePullBackOff, as a cluster shows an image it cannot pull). No
 * registry's name is ever looked up.
 */
function registryHostsDir(dir: string, registry: string): string {
  const hosts = path.join(dir, 'registry-hosts');
  fs.mkdirSync(path.join(hosts, '_default'), { recursive: true });
  fs.writeFileSync(
    path.join(hosts, '_default', 'hosts.toml'),
    `server = "http://${registry}"\n\n[host."http://${registry}"]\n  capabilities = ["pull", "resolve"]\n`,
  );
  return hosts;
}

function containerdConfig(bins: NodeBinaries, dir: string, cniDir: string, registry: string): string {
  // Everything containerd writes stays under the node's directory (taken back on stop).
  return `version = 3
root = '${dir}/containerd/root'
state = '${dir}/containerd/state'
imports = []

[grpc]
  address = '${dir}/containerd.sock'

[plugins.'io.containerd.cri.v1.runtime']
  # Root here lacks CAP_SYS_RESOURCE: a container's oom_score_adj may not go below containerd's.
  restrict_oom_score_adj = true
  enable_selinux = false
  cdi_spec_dirs = []
  # The pods' network namespaces under the state directory: taken back with it.
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = 'runc'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = 'io.containerd.runc.v2'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = '${RUNC}'
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ['${bins.dir}/cni']
    conf_dir = '${cniDir}'

[plugins.'io.containerd.cri.v1.images']
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = '${PAUSE_IMAGE}'
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = '${registryHostsDir(dir, registry)}'

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = '127.0.0.1'

[plugins.'io.containerd.internal.v1.opt']
  path = '${dir}/containerd/opt'

[plugins.'io.containerd.nri.v1.nri']
  disable = true
`;
}

async function startKubelet(
  bins: NodeBinaries,
  dir: string,
  containerdSocket: string,
  plane: PlaneForRealNode,
): Promise<ChildProcess> {
  const root = path.join(dir, 'kubelet');
  fs.mkdirSync(root, { recursive: true });
  // The node's own resolver, which pods with dnsPolicy Default get: on the pod's loopback, where
  // nothing answers, so such a lookup fails here, never off the machine. ClusterFirst pods (the
  // default) ask the cluster DNS.
  const resolv = path.join(dir, 'resolv.conf');
  fs.writeFileSync(resolv, 'nameserver 127.0.0.1\n');
  const config = path.join(dir, 'kubelet.yaml');
  const port = await freePort();
  fs.writeFileSync(
    config,
    JSON.stringify(
      {
        apiVersion: 'kubelet.config.k8s.io/v1beta1',
        kind: 'KubeletConfiguration',
        address: NODE_NETWORK.gateway,
        port,
        readOnlyPort: 0,
        healthzPort: 0,
        failCgroupV1: false,
        cgroupDriver: 'cgroupfs',
        failSwapOn: false,
        containerRuntimeEndpoint: `unix://${containerdSocket}`,
        authentication: {
          anonymous: { enabled: false },
          webhook: { enabled: true },
          x509: { clientCAFile: path.join(plane.certs, 'ca.crt') },
        },
        authorization: { mode: 'Webhook' },
        resolvConf: resolv,
        clusterDomain: CLUSTER_DNS.domain,
        clusterDNS: [CLUSTER_DNS.address],
        // Never evict for a busy shared disk; images are never collected (none can be pulled again).
        evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
        imageGCHighThresholdPercent: 100,
        imageGCLowThresholdPercent: 99,
        serializeImagePulls: false,
        registerNode: true,
        nodeStatusUpdateFrequency: '4s',
        // Pods synced (and their Secret and ConfigMap volumes refreshed) every 10 s rather than the
        // default minute: what waits on a renewed certificate reaching a member waits less. Nothing
        // of the kit depends on the period; its tests wait on what the members serve.
        syncFrequency: '10s',
        localStorageCapacityIsolation: false,
        // With the plane's logs, so a failed run keeps every container's output (the operators' own).
        podLogsDir: path.join(plane.logs, 'pods'),
      },
      null,
      2,
    ),
  );
  const args = [
    `--config=${config}`,
    `--kubeconfig=${plane.nodeKubeconfig}`,
    `--root-dir=${root}`,
    `--cert-dir=${path.join(dir, 'kubelet-pki')}`,
    `--hostname-override=${NODE_NAME}`,
    `--node-ip=${NODE_NETWORK.gateway}`,
    '--v=1',
  ];
  return startProcess(path.join(bins.dir, 'kubelet'), args, path.join(plane.logs, 'kubelet.log'));
}

async function startKubeProxy(bins: NodeBinaries, dir: string, plane: PlaneForRealNode): Promise<ChildProcess> {
  const config = path.join(dir, 'kube-proxy.yaml');
  fs.writeFileSync(
    config,
    JSON.stringify(
      {
        apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
        kind: 'KubeProxyConfiguration',
        mode: 'iptables',
        hostnameOverride: NODE_NAME,
        clientConnection: { kubeconfig: plane.proxyKubeconfig },
        clusterCIDR: NODE_NETWORK.cidr,
        // Every Service connection leaves the node's address, so replies come back through the
        // node's rules (a pod talking to itself through its Service among them).
        iptables: { masqueradeAll: true },
        // The machine's conntrack settings stay as they are.
        conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
        healthzBindAddress: `127.0.0.1:${String(await freePort())}`,
        metricsBindAddress: `127.0.0.1:${String(await freePort())}`,
        nodePortAddresses: [NODE_NETWORK.cidr],
      },
      null,
      2,
    ),
  );
  return startProcess(
    path.join(bins.dir, 'kube-proxy'),
    [`--config=${config}`, '--v=1'],
    path.join(plane.logs, 'kube-proxy.log'),
  );
}
