/**
 * What a real node leaves on the machine, and taking it back — after a clean stop and after a
 * crashed or killed run alike. A node's owner (the process that started it) and its work
 * directory are written to `OWNER_FILE`; the next start takes back what a dead owner left, and
 * refuses to start while a live one holds the node (one real node per machine: the bridge, the
 * Service range's route and kube-proxy's chains are the machine's).
 *
 * Left unless taken back: the node's processes (containerd, its shims, kubelet, kube-proxy) and
 * the pods' processes, mounts under the work directory (the kubelet's bind mount of its root,
 * volumes, the pods' network namespaces, containerd's snapshots), kube-proxy's `KUBE-*` chains,
 * the `kubepods` cgroups, and the network of network.ts.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { removeNodeNetwork } from './network';
import { processesNaming } from '../processes';
import { numberAt, parseJson, stringAt, stringsAt } from '../../constructs/contract/json';

export const OWNER_FILE = '/run/opkit-real-node/owner.json';

/** host-local's default record of the addresses given out on the nodes' network (named opkit-node). */
const LEGACY_IPAM_DIR = '/var/lib/cni/networks/opkit-node';

export interface NodeOwner {
  readonly pid: number;
  readonly workDir: string;
  /** For `kube-proxy --cleanup`. */
  readonly kubeProxy: string;
  /** Directories outside the work directory the kubelet makes whatever its flags say, absent before the node started. */
  readonly madeDirs: readonly string[];
}

/** Where the kubelet writes whatever its root directory (its device manager's socket directory). */
export const KUBELET_FIXED_DIRS = ['/var/lib/kubelet', '/var/log/pods'];

/** The fixed directories not there yet, which the node's owner then takes back. */
export function absentDirs(): string[] {
  return KUBELET_FIXED_DIRS.filter((d) => !fs.existsSync(d));
}

/** Whether a process of this pid runs. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function readOwner(): NodeOwner | undefined {
  let parsed: unknown;
  try {
    parsed = parseJson(fs.readFileSync(OWNER_FILE, 'utf8'));
  } catch {
    return undefined;
  }
  const [pid, workDir, kubeProxy] = [
    numberAt(parsed, 'pid'),
    stringAt(parsed, 'workDir'),
    stringAt(parsed, 'kubeProxy'),
  ];
  if (pid === undefined || workDir === undefined || kubeProxy === undefined) return undefined;
  return { pid, workDir, kubeProxy, madeDirs: stringsAt(parsed, 'madeDirs') };
}

/**
 * Before this process starts the machine's real node: takes back what a dead owner left; throws
 * when a live one (another process) holds it.
 */
export function claimRealNode(): void {
  // Where earlier versions let host-local record the pods' addresses, shared by every node this
  // machine ran, until none were left (network.ts): a node now keeps them in its own directory.
  fs.rmSync(LEGACY_IPAM_DIR, { recursive: true, force: true });
  const previous = readOwner();
  if (previous && previous.pid !== process.pid && alive(previous.pid))
    throw new Error(
      `a real node already runs on this machine (process ${String(previous.pid)}, ${previous.workDir}): one at a time`,
    );
  if (!previous) return;
  takeBack(previous);
  // A dead run's whole plane (its etcd data, certificates, logs): nothing will stop it now.
  fs.rmSync(path.dirname(previous.workDir), { recursive: true, force: true });
}

/** Records this process as the node's owner, for `takeBack` after a crash. */
export function recordOwner(owner: NodeOwner): void {
  fs.mkdirSync(path.dirname(OWNER_FILE), { recursive: true });
  fs.writeFileSync(OWNER_FILE, JSON.stringify(owner));
}

/** Takes back everything the node of `owner` made; then it no longer holds the machine's node. */
export function takeBack(owner: NodeOwner): void {
  // The whole plane the node was part of: after a crash its API server and etcd are left too.
  killProcessesOf(path.dirname(owner.workDir));
  killPods();
  spawnSync(owner.kubeProxy, ['--cleanup'], { stdio: 'ignore' });
  // What kube-proxy's cleanup leaves: the kubelet's own chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY).
  for (const tool of ['iptables', 'ip6tables'])
    for (const table of ['filter', 'nat', 'mangle']) removeKubeChains(tool, table);
  unmountUnder(owner.workDir);
  removeCgroups();
  removeNodeNetwork();
  fs.rmSync(owner.workDir, { recursive: true, force: true });
  for (const dir of owner.madeDirs) fs.rmSync(dir, { recursive: true, force: true });
  if (readOwner()?.workDir === owner.workDir) fs.rmSync(OWNER_FILE, { force: true });
}

/** Every process whose command line names the work directory: the node's own and containerd's shims. */
function killProcessesOf(workDir: string): void {
  for (const pid of pidsNaming(workDir)) if (pid !== process.pid) signal(pid);
}

/** The pids whose command line names `text` (e.g. a work directory). */
export function pidsNaming(text: string): number[] {
  return processesNaming(text).map((p) => p.pid);
}

/** A file's text, or '' when it cannot be read (a process or cgroup gone meanwhile). */
function readOrEmpty(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

/** The cgroup hierarchies (v1 controllers and the unified one) the kubelet makes `kubepods` in. */
function cgroupRoots(): string[] {
  const base = '/sys/fs/cgroup';
  if (fs.existsSync(path.join(base, 'cgroup.controllers'))) return [base];
  return fs
    .readdirSync(base)
    .map((d) => path.join(base, d))
    .filter((d) => fs.existsSync(path.join(d, 'cgroup.procs')));
}

/** Depth-first: the cgroup directories under (and including) `dir`. */
function cgroupTree(dir: string): string[] {
  const children = fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => cgroupTree(path.join(dir, e.name)));
  return [...children, dir];
}

function kubepodsTrees(): string[] {
  return cgroupRoots().flatMap((root) =>
    fs.existsSync(path.join(root, 'kubepods')) ? cgroupTree(path.join(root, 'kubepods')) : [],
  );
}

/** Every process in a pod's cgroup: the containers the shims ran. */
function killPods(): void {
  for (const dir of kubepodsTrees()) {
    for (const pid of readOrEmpty(path.join(dir, 'cgroup.procs')).split('\n').filter(Boolean)) signal(Number(pid));
  }
}

function removeCgroups(): void {
  for (const dir of kubepodsTrees()) {
    // A cgroup whose last process has just been killed may be busy for a moment.
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        fs.rmdirSync(dir);
        break;
      } catch {
        execFileSync('sleep', ['0.1']);
      }
    }
  }
}

/** Unmounts everything mounted under `dir`, deepest first (lazily: a mount still busy goes when freed). */
function unmountUnder(dir: string): void {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  const mounts = fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => point === dir || point.startsWith(prefix))
    .sort((a, b) => b.length - a.length);
  for (const point of mounts) spawnSync('umount', ['-l', point], { stdio: 'ignore' });
}

/** Every `KUBE-*` chain of a table, and every rule that jumps to one. */
function removeKubeChains(tool: string, table: string): void {
  const listed = spawnSync(tool, ['-t', table, '-S'], { encoding: 'utf8' });
  if (listed.status !== 0) return;
  const lines = listed.stdout.split('\n');
  const jumps = lines.filter((l) => l.startsWith('-A ') && !l.startsWith('-A KUBE-') && /-j KUBE-\S+/.test(l));
  for (const rule of jumps) {
    // `-A CHAIN args…` deletes as `-D CHAIN args…` (iptables -S quotes what needs it; the kubelet's comments are simple).
    const args = rule.replace(/^-A /, '').match(/"[^"]*"|\S+/g) ?? [];
    spawnSync(tool, ['-t', table, '-D', ...args.map((a) => a.replace(/^"|"$/g, ''))], { stdio: 'ignore' });
  }
  const chains = lines.filter((l) => l.startsWith('-N KUBE-')).map((l) => l.slice(3));
  for (const chain of chains) spawnSync(tool, ['-t', table, '-F', chain], { stdio: 'ignore' });
  for (const chain of chains) spawnSync(tool, ['-t', table, '-X', chain], { stdio: 'ignore' });
}
