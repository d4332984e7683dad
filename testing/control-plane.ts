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
import { type ControlPlaneBinaries, downloadBinaries, resolveBinaries } from './plane/binaries';
import { startControllerManager } from './plane/controller-manager';
import { startEtcd } from './plane/etcd';
import { startNodes } from './plane/nodes';
import { generateCertificates, type PlaneTokens, writeKubeconfig, writeTokens } from './plane/pki';
import { log, stopProcess, waitFor } from './plane/process';

export { freePort };
export { type ControlPlaneBinaries, downloadBinaries, resolveBinaries } from './plane/binaries';
export { CRASH_LOOP_LABEL, IMAGE_PULL_FAILURE_LABEL } from './plane/nodes';

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
  /**
   * The API server's only way to the network (webhooks, conversion), when the harness started it:
   * loopback, and Services routed to a local server; everything else refused at once and logged.
   * Undefined for a borrowed cluster.
   */
  readonly egress?: Pick<EgressProxy, 'log' | 'route'>;
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
}

/** A control plane from OPKIT_KUBECONFIG, or a fresh one started from binaries. */
export async function startControlPlane(options: StartOptions = {}): Promise<ControlPlane> {
  const verbose = options.verbose ?? true;
  const existing = process.env.OPKIT_KUBECONFIG;
  if (existing && !options.extraApiserverArgs?.length && !options.own) {
    log(verbose, `using the existing cluster in OPKIT_KUBECONFIG=${existing}`);
    const versions = JSON.parse(
      execFileSync('kubectl', ['--kubeconfig', existing, 'version', '-o', 'json'], { encoding: 'utf8' }),
    ) as { serverVersion: { gitVersion: string } };
    const version = versions.serverVersion.gitVersion;
    const server = execFileSync(
      'kubectl',
      ['--kubeconfig', existing, 'config', 'view', '--minify', '-o', 'jsonpath={.clusters[0].cluster.server}'],
      { encoding: 'utf8' },
    );
    const nodes =
      execFileSync('kubectl', ['--kubeconfig', existing, 'get', 'nodes', '-o', 'name'], { encoding: 'utf8' }).trim()
        .length > 0;
    return {
      kubeconfig: existing,
      server,
      version,
      owned: false,
      nodes,
      stop: () => Promise.resolve(),
    };
  }
  const downloaded = await downloadBinaries(verbose);
  const resolved = resolveBinaries(verbose);
  const bins = downloaded ? { ...resolved, source: 'downloaded' } : resolved;
  log(verbose, `Kubernetes ${bins.version} (binaries: ${bins.source}, ${bins.dir})`);
  return startFromBinaries(bins, options);
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
  readonly verbose: boolean;
}

function newPlane(verbose: boolean): Plane {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-control-plane-'));
  const plane = { workDir, certs: path.join(workDir, 'pki'), logs: path.join(workDir, 'logs'), procs: [], verbose };
  fs.mkdirSync(plane.certs);
  fs.mkdirSync(plane.logs);
  return plane;
}

/** Stops the processes in reverse order, drops etcd's data, and the work dir unless `keepLogs`. */
async function stopPlane(plane: Plane, opts: { keepLogs?: boolean } = {}): Promise<void> {
  for (const p of [...plane.procs].reverse()) await stopProcess(p);
  fs.rmSync(path.join(plane.workDir, 'etcd-data'), { recursive: true, force: true });
  if (!opts.keepLogs) fs.rmSync(plane.workDir, { recursive: true, force: true });
  else log(plane.verbose, `logs kept in ${plane.logs}`);
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
    generateCertificates(plane.certs);
    const tokens = writeTokens(plane.certs);
    const apiPort = await freePort();
    const server = `https://127.0.0.1:${apiPort}`;
    const caFile = path.join(plane.certs, 'ca.crt');
    const egress = await startEgressProxy(path.join(plane.workDir, 'egress'), { server, caFile, token: tokens.admin });
    plane.procs.push(egress.process);
    const etcd = await startEtcd(bins.etcd, plane.workDir, plane.logs);
    plane.procs.push(etcd.process);
    const apiserver = startApiserver({
      bin: bins.kubeApiserver,
      port: apiPort,
      etcdUrl: etcd.url,
      certs: plane.certs,
      logs: plane.logs,
      egressConfigFile: egress.configFile,
      audit: options.audit ?? false,
      extraArgs: [...featureGateArgs(options.featureGates), ...(options.extraApiserverArgs ?? [])],
    });
    plane.procs.push(apiserver.process);
    await waitForApiserver(server, caFile, tokens.admin, plane);
    const kubeconfig = writeKubeconfig(
      path.join(plane.workDir, 'kubeconfig'),
      server,
      caFile,
      'opkit-admin',
      tokens.admin,
    );
    const nodes = await startControllers(bins, tokens, { ...plane, server, kubeconfig });
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
      egress: { log: egress.log, route: egress.route },
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
