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
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { type EgressProxy, startEgressProxy } from './egress-proxy';
import { freePort } from './free-port';
import { KWOK_STAGES, KWOK_STORAGE_CLASS } from './kwok-stages';
import {
  cacheDirectory,
  fetchReleaseBinaries,
  isCompleteCache,
  mirrorSources,
  PUBLISHED_SOURCES,
  releasePlatform,
  releaseVersions,
} from './release-binaries';

export { freePort };

const HARNESS_DIR = __dirname;

export interface ControlPlaneBinaries {
  readonly dir: string;
  readonly etcd: string;
  readonly kubeApiserver: string;
  /** Absent when KUBEBUILDER_ASSETS has none: no garbage collection or workload controllers then. */
  readonly kubeControllerManager?: string;
  /** Absent when KUBEBUILDER_ASSETS has none: pods are then never scheduled. */
  readonly kubeScheduler?: string;
  /** kwok and the directory of its stages: simulated kubelets, so scheduled pods run. */
  readonly kwok?: { readonly bin: string; readonly stages: string };
  /** e.g. v1.33.13 */
  readonly version: string;
  /** How the binaries were found: 'KUBEBUILDER_ASSETS', 'cache', 'downloaded' or 'built'. */
  readonly source: string;
}

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
}

function log(verbose: boolean, msg: string): void {
  if (verbose) process.stderr.write(`[control-plane] ${msg}\n`);
}

/** Finds (or builds and caches) the control-plane binaries. */
export function resolveBinaries(verbose = true): ControlPlaneBinaries {
  const assets = process.env.KUBEBUILDER_ASSETS;
  if (assets) {
    const need = (name: string) => {
      const p = path.join(assets, name);
      if (!fs.existsSync(p)) throw new Error(`KUBEBUILDER_ASSETS=${assets} has no ${name}`);
      return p;
    };
    const optional = (name: string) => (fs.existsSync(path.join(assets, name)) ? path.join(assets, name) : undefined);
    const apiserver = need('kube-apiserver');
    return {
      dir: assets,
      etcd: need('etcd'),
      kubeApiserver: apiserver,
      kubeControllerManager: optional('kube-controller-manager'),
      kubeScheduler: optional('kube-scheduler'),
      kwok: kwokIn(assets),
      version: binaryVersion(apiserver),
      source: 'KUBEBUILDER_ASSETS',
    };
  }
  const started = Date.now();
  const out = execFileSync('bash', [path.join(HARNESS_DIR, 'build-control-plane.sh')], {
    // Explicitly: this module's view of the environment (the cache and versions it names), which in
    // a jest test file is not the one child processes would otherwise inherit.
    env: process.env,
    stdio: ['ignore', 'pipe', verbose ? 'inherit' : 'ignore'],
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  // The script prints the cache directory last.
  const dir = out.trim().split('\n').pop() ?? '';
  const apiserver = path.join(dir, 'kube-apiserver');
  return {
    dir,
    etcd: path.join(dir, 'etcd'),
    kubeApiserver: apiserver,
    kubeControllerManager: path.join(dir, 'kube-controller-manager'),
    kubeScheduler: path.join(dir, 'kube-scheduler'),
    kwok: kwokIn(dir),
    version: binaryVersion(apiserver),
    source: Date.now() - started > 30_000 ? 'built' : 'cache',
  };
}

/**
 * Fills the cache with the projects' release binaries, each checked against its published
 * SHA-256, when it is not complete: true when it did. False, saying why, when there is nothing to
 * do or it cannot (offline, a platform without releases, a failed check): the build then fills it.
 */
export async function downloadBinaries(verbose = true): Promise<boolean> {
  if (process.env.KUBEBUILDER_ASSETS || process.env.OPKIT_RELEASE_DOWNLOAD === 'off') return false;
  const versions = releaseVersions();
  const dir = cacheDirectory(versions);
  if (isCompleteCache(dir, versions)) return false;
  const platform = releasePlatform();
  if (!platform) {
    log(verbose, `no release binaries are published for ${process.platform}/${process.arch}: building them`);
    return false;
  }
  const mirror = process.env.OPKIT_RELEASE_MIRROR;
  const started = Date.now();
  log(verbose, `downloading Kubernetes ${versions.kubernetes}, etcd and kwok from ${mirror ?? 'their releases'}`);
  try {
    await fetchReleaseBinaries(dir, versions, mirror ? mirrorSources(mirror) : PUBLISHED_SOURCES, platform);
  } catch (err) {
    log(verbose, `${err instanceof Error ? err.message : String(err)}; building from the Go module proxy instead`);
    return false;
  }
  log(verbose, `downloaded and verified in ${((Date.now() - started) / 1000).toFixed(1)}s: ${dir}`);
  return true;
}

/** kwok and its stages (a `kwok-stages` directory beside it), when both are there. */
function kwokIn(dir: string): ControlPlaneBinaries['kwok'] {
  const bin = path.join(dir, 'kwok');
  const stages = path.join(dir, 'kwok-stages');
  return fs.existsSync(bin) && fs.existsSync(stages) ? { bin, stages } : undefined;
}

function binaryVersion(apiserver: string): string {
  const out = execFileSync(apiserver, ['--version'], { encoding: 'utf8' });
  return out.trim().split(/\s+/).pop() ?? 'unknown';
}

/** A control plane from OPKIT_KUBECONFIG, or a fresh one started from binaries. */
export async function startControlPlane(options: StartOptions = {}): Promise<ControlPlane> {
  const verbose = options.verbose ?? true;
  const existing = process.env.OPKIT_KUBECONFIG;
  if (existing && !options.extraApiserverArgs?.length) {
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

function openssl(cwd: string, args: string[]): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA, an apiserver serving certificate for loopback, and the service-account key pair. */
function generateCertificates(dir: string): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=opkit-test-ca',
  ]);
  fs.writeFileSync(
    path.join(dir, 'serving.ext'),
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc',
    ].join('\n'),
  );
  openssl(dir, [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'apiserver.key',
    '-out',
    'apiserver.csr',
    '-subj',
    '/CN=kube-apiserver',
  ]);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'apiserver.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'apiserver.crt',
    '-days',
    '2',
    '-extfile',
    'serving.ext',
  ]);
  openssl(dir, ['genrsa', '-out', 'sa.key', '2048']);
  openssl(dir, ['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
}

function kubeconfigYaml(server: string, caFile: string, user: string, token: string): string {
  const ca = fs.readFileSync(caFile).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: opkit-test',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${ca}`,
    'users:',
    `- name: ${user}`,
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: opkit-test',
    '  context:',
    '    cluster: opkit-test',
    `    user: ${user}`,
    'current-context: opkit-test',
    '',
  ].join('\n');
}

/** GET a path with a bearer token; resolves with the status code (0 on connection error). */
function probe(url: string, ca: Buffer, token?: string): Promise<number> {
  return new Promise((resolve) => {
    const req = https.get(
      url,
      {
        ca,
        headers: token ? { Authorization: `Bearer ${token}` } : {},
        rejectUnauthorized: !!ca.length,
        timeout: 2000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', () => {
      resolve(0);
    });
    req.on('timeout', () => {
      req.destroy();
      resolve(0);
    });
  });
}

async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  procs: ChildProcess[],
  timeoutMs: number,
  logsDir: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const dead = procs.find((p) => p.exitCode !== null || p.signalCode !== null);
    if (dead)
      throw new Error(
        `${what}: a control-plane process exited (${dead.spawnfile}, code ${dead.exitCode}); see logs in ${logsDir}`,
      );
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what}: not ready within ${timeoutMs / 1000}s; see logs in ${logsDir}`);
}

function startProcess(bin: string, args: string[], logFile: string): ChildProcess {
  const out = fs.openSync(logFile, 'a');
  const child = spawn(bin, args, { stdio: ['ignore', out, out], detached: false });
  fs.closeSync(out);
  return child;
}

async function stopProcess(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise<void>((r) =>
    p.once('exit', () => {
      r();
    }),
  );
  p.kill('SIGTERM');
  const timer = setTimeout(() => p.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

async function startFromBinaries(bins: ControlPlaneBinaries, options: StartOptions): Promise<ControlPlane> {
  const verbose = options.verbose ?? true;
  const started = Date.now();
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-control-plane-'));
  const certs = path.join(workDir, 'pki');
  const logs = path.join(workDir, 'logs');
  fs.mkdirSync(certs);
  fs.mkdirSync(logs);
  generateCertificates(certs);

  const [etcdClient, etcdPeer, apiPort, kcmPort, schedulerPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const adminToken = randomBytes(24).toString('hex');
  const kcmToken = randomBytes(24).toString('hex');
  const schedulerToken = randomBytes(24).toString('hex');
  const kwokToken = randomBytes(24).toString('hex');
  fs.writeFileSync(
    path.join(certs, 'tokens.csv'),
    [
      `${adminToken},opkit-admin,opkit-admin,"system:masters"`,
      // All controllers share one identity here (no per-controller service accounts), so it needs
      // the rights of every controller: give it the masters group.
      `${kcmToken},system:kube-controller-manager,system:kube-controller-manager,"system:masters"`,
      // The scheduler's own user, which the API server's bootstrap RBAC already grants what it needs.
      `${schedulerToken},system:kube-scheduler,system:kube-scheduler`,
      // kwok gets the rights of a kubelet and a volume provisioner, from KWOK_RULES below.
      `${kwokToken},opkit-kwok,opkit-kwok`,
    ].join('\n') + '\n',
  );

  const procs: ChildProcess[] = [];
  const stop = async (opts: { keepLogs?: boolean } = {}) => {
    for (const p of [...procs].reverse()) await stopProcess(p);
    fs.rmSync(path.join(workDir, 'etcd-data'), { recursive: true, force: true });
    if (!opts.keepLogs) fs.rmSync(workDir, { recursive: true, force: true });
    else log(verbose, `logs kept in ${logs}`);
  };

  try {
    const server = `https://127.0.0.1:${apiPort}`;
    // Started first: the API server sends every call to a webhook or Service through it.
    const egress = await startEgressProxy(path.join(workDir, 'egress'), {
      server,
      caFile: path.join(certs, 'ca.crt'),
      token: adminToken,
    });
    procs.push(egress.process);

    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    procs.push(
      startProcess(
        bins.etcd,
        [
          '--name',
          'default',
          '--data-dir',
          path.join(workDir, 'etcd-data'),
          '--listen-client-urls',
          etcdUrl,
          '--advertise-client-urls',
          etcdUrl,
          '--listen-peer-urls',
          `http://127.0.0.1:${etcdPeer}`,
          '--initial-advertise-peer-urls',
          `http://127.0.0.1:${etcdPeer}`,
          '--initial-cluster',
          `default=http://127.0.0.1:${etcdPeer}`,
          // Test data is throwaway: skipping fsync makes every write much cheaper.
          '--unsafe-no-fsync',
          '--log-level',
          'warn',
        ],
        path.join(logs, 'etcd.log'),
      ),
    );

    const auditLog = options.audit ? path.join(logs, 'audit.log') : undefined;
    if (auditLog) {
      fs.writeFileSync(
        path.join(certs, 'audit-policy.yaml'),
        [
          'apiVersion: audit.k8s.io/v1',
          'kind: Policy',
          'omitStages: ["RequestReceived"]',
          'rules:',
          '- level: Metadata',
          '  verbs: ["create", "update", "patch", "delete", "deletecollection"]',
          '- level: None',
          '',
        ].join('\n'),
      );
    }

    procs.push(
      startProcess(
        bins.kubeApiserver,
        [
          `--etcd-servers=${etcdUrl}`,
          '--bind-address=127.0.0.1',
          '--advertise-address=127.0.0.1',
          `--secure-port=${apiPort}`,
          `--cert-dir=${certs}`,
          `--tls-cert-file=${path.join(certs, 'apiserver.crt')}`,
          `--tls-private-key-file=${path.join(certs, 'apiserver.key')}`,
          `--client-ca-file=${path.join(certs, 'ca.crt')}`,
          `--token-auth-file=${path.join(certs, 'tokens.csv')}`,
          '--authorization-mode=RBAC',
          '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
          `--service-account-key-file=${path.join(certs, 'sa.pub')}`,
          `--service-account-signing-key-file=${path.join(certs, 'sa.key')}`,
          // A range routable off this machine: the egress proxy makes sure nothing is ever dialled there.
          '--service-cluster-ip-range=10.0.0.0/24',
          `--egress-selector-config-file=${egress.configFile}`,
          '--allow-privileged=false',
          ...(auditLog
            ? [
                `--audit-policy-file=${path.join(certs, 'audit-policy.yaml')}`,
                `--audit-log-path=${auditLog}`,
                '--audit-log-mode=blocking',
                '--audit-log-format=json',
                // Never rotated: at the default (100 MB, lumberjack's) a run of 10,000 resources
                // rotated the log, and everything counted from an offset in it read as 0 writes.
                '--audit-log-maxsize=1000000',
              ]
            : []),
          '--v=1',
          ...(options.extraApiserverArgs ?? []),
        ],
        path.join(logs, 'kube-apiserver.log'),
      ),
    );

    const ca = fs.readFileSync(path.join(certs, 'ca.crt'));
    await waitFor(
      'kube-apiserver',
      async () => (await probe(`${server}/readyz`, ca, adminToken)) === 200,
      procs,
      90_000,
      logs,
    );

    const kubeconfig = path.join(workDir, 'kubeconfig');
    fs.writeFileSync(kubeconfig, kubeconfigYaml(server, path.join(certs, 'ca.crt'), 'opkit-admin', adminToken), {
      mode: 0o600,
    });

    if (bins.kubeControllerManager) {
      const kcmKubeconfig = path.join(certs, 'kcm.kubeconfig');
      fs.writeFileSync(kcmKubeconfig, kubeconfigYaml(server, path.join(certs, 'ca.crt'), 'kcm', kcmToken), {
        mode: 0o600,
      });
      procs.push(
        startProcess(
          bins.kubeControllerManager,
          [
            `--kubeconfig=${kcmKubeconfig}`,
            `--authentication-kubeconfig=${kcmKubeconfig}`,
            `--authorization-kubeconfig=${kcmKubeconfig}`,
            '--bind-address=127.0.0.1',
            `--secure-port=${kcmPort}`,
            '--leader-elect=false',
            `--service-account-private-key-file=${path.join(certs, 'sa.key')}`,
            `--root-ca-file=${path.join(certs, 'ca.crt')}`,
            '--use-service-account-credentials=false',
            // Everything on by default (garbage collector, deployment, replicaset, statefulset, job,
            // cronjob, persistentvolume binder, namespace, serviceaccount ...), and no cloud.
            '--controllers=*',
            // Faster than the defaults, so tests see garbage collection and bindings sooner, and
            // no client-side throttling of the controllers' own requests (default 20 qps).
            '--concurrent-gc-syncs=5',
            '--kube-api-qps=200',
            '--kube-api-burst=400',
            '--pvclaimbinder-sync-period=2s',
            '--v=1',
          ],
          path.join(logs, 'kube-controller-manager.log'),
        ),
      );
      await waitFor(
        'kube-controller-manager',
        async () => (await probe(`https://127.0.0.1:${kcmPort}/healthz`, Buffer.alloc(0))) === 200,
        procs,
        60_000,
        logs,
      );
    } else {
      log(verbose, 'no kube-controller-manager in KUBEBUILDER_ASSETS: no garbage collection or workload controllers');
    }

    let nodes = false;
    if (bins.kubeControllerManager && bins.kubeScheduler && bins.kwok) {
      await startNodes({
        scheduler: bins.kubeScheduler,
        kwok: bins.kwok,
        server,
        certs,
        logs,
        procs,
        kubeconfig,
        schedulerToken,
        schedulerPort,
        kwokToken,
      });
      nodes = true;
    } else {
      log(verbose, 'no kube-scheduler or kwok: pods are never scheduled, and tests that need running pods are skipped');
    }

    // The "default" ServiceAccount must exist before pods can be created in "default".
    await waitFor(
      'default ServiceAccount',
      () => {
        try {
          execFileSync('kubectl', ['--kubeconfig', kubeconfig, 'get', 'serviceaccount', 'default', '-n', 'default'], {
            stdio: 'ignore',
          });
          return true;
        } catch {
          return !bins.kubeControllerManager;
        }
      },
      procs,
      60_000,
      logs,
    );

    log(verbose, `ready in ${((Date.now() - started) / 1000).toFixed(1)}s at ${server} (work dir ${workDir})`);
    return {
      kubeconfig,
      server,
      version: bins.version,
      owned: true,
      workDir,
      auditLog,
      etcdUrl,
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

/** What kwok needs: a kubelet's rights on nodes, pods and leases, and a provisioner's on volumes. */
const KWOK_RULES = [
  { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
  {
    apiGroups: [''],
    resources: ['nodes/status', 'pods/status', 'persistentvolumes/status', 'persistentvolumeclaims/status'],
    verbs: ['update', 'patch'],
  },
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'update', 'patch', 'delete'] },
  {
    apiGroups: [''],
    resources: ['persistentvolumes'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'],
  },
  { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
];

/**
 * A pod label for tests of failure handling (kwok-crash-loop-stage.yaml): a pod carrying it with
 * the value "true" crash-loops as a kubelet shows it — Running, never Ready, its containers
 * waiting in CrashLoopBackOff after exiting with code 1. Put it on a workload's pod template.
 */
export const CRASH_LOOP_LABEL = 'testing.cdk8s-operator-kit/crash-loop';

/**
 * A pod label for tests of failure handling (kwok-image-pull-failure-stage.yaml): a pod carrying it
 * with the value "true" shows what a kubelet shows for an image it cannot pull — Pending, never
 * Ready, its containers waiting in ErrImagePull, then ImagePullBackOff, and again after the back-off.
 */
export const IMAGE_PULL_FAILURE_LABEL = 'testing.cdk8s-operator-kit/image-pull-failure';

/** The simulated nodes: how many, and the kwok stages (files under its module's kustomize/stage). */
const NODE_COUNT = 2;

/**
 * Starts kube-scheduler and kwok, creates the fake nodes kwok manages and kwok's default
 * StorageClass, and waits until the nodes are Ready. Each runs as its own user with its own
 * rights (not the admin's).
 */
async function startNodes(o: {
  scheduler: string;
  kwok: NonNullable<ControlPlaneBinaries['kwok']>;
  server: string;
  certs: string;
  logs: string;
  procs: ChildProcess[];
  kubeconfig: string;
  schedulerToken: string;
  schedulerPort: number;
  kwokToken: string;
}): Promise<void> {
  const ca = path.join(o.certs, 'ca.crt');
  const kubectl = (args: string[], input?: string) =>
    execFileSync('kubectl', ['--kubeconfig', o.kubeconfig, ...args], {
      input,
      stdio: ['pipe', 'pipe', 'pipe'],
      encoding: 'utf8',
    });

  const schedulerKubeconfig = path.join(o.certs, 'scheduler.kubeconfig');
  fs.writeFileSync(schedulerKubeconfig, kubeconfigYaml(o.server, ca, 'scheduler', o.schedulerToken), { mode: 0o600 });
  o.procs.push(
    startProcess(
      o.scheduler,
      [
        `--kubeconfig=${schedulerKubeconfig}`,
        `--authentication-kubeconfig=${schedulerKubeconfig}`,
        `--authorization-kubeconfig=${schedulerKubeconfig}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${o.schedulerPort}`,
        '--leader-elect=false',
        '--v=1',
      ],
      path.join(o.logs, 'kube-scheduler.log'),
    ),
  );

  kubectl(
    ['apply', '--server-side', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: 'opkit:kwok' },
          rules: KWOK_RULES,
        },
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: 'opkit:kwok' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'opkit:kwok' },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'opkit-kwok' }],
        },
        ...Array.from({ length: NODE_COUNT }, (_, i) => ({
          apiVersion: 'v1',
          kind: 'Node',
          metadata: {
            name: `kwok-node-${i}`,
            annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
            labels: {
              'kubernetes.io/hostname': `kwok-node-${i}`,
              'kubernetes.io/os': 'linux',
              'kubernetes.io/arch': 'amd64',
              type: 'kwok',
            },
          },
        })),
      ],
    }),
  );
  // kwok's default StorageClass: claims without a class get a volume provisioned and bound.
  kubectl(['apply', '--server-side', '-f', path.join(o.kwok.stages, KWOK_STORAGE_CLASS)]);

  const kwokKubeconfig = path.join(o.certs, 'kwok.kubeconfig');
  fs.writeFileSync(kwokKubeconfig, kubeconfigYaml(o.server, ca, 'kwok', o.kwokToken), { mode: 0o600 });
  o.procs.push(
    startProcess(
      o.kwok.bin,
      [
        `--kubeconfig=${kwokKubeconfig}`,
        '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
        '--node-lease-duration-seconds=40',
        '--cidr=10.244.0.0/16',
        '--node-ip=10.240.0.1',
        ...KWOK_STAGES.flatMap((stage) => ['-c', path.join(o.kwok.stages, stage)]),
        '-c',
        path.join(HARNESS_DIR, 'kwok-crash-loop-stage.yaml'),
        '-c',
        path.join(HARNESS_DIR, 'kwok-image-pull-failure-stage.yaml'),
      ],
      path.join(o.logs, 'kwok.log'),
    ),
  );

  await waitFor(
    'kube-scheduler',
    async () => (await probe(`https://127.0.0.1:${o.schedulerPort}/healthz`, Buffer.alloc(0))) === 200,
    o.procs,
    60_000,
    o.logs,
  );
  await waitFor(
    `${NODE_COUNT} Ready nodes`,
    () => {
      const nodes = (
        JSON.parse(kubectl(['get', 'nodes', '-o', 'json'])) as {
          items: { status?: { conditions?: { type: string; status: string }[] } }[];
        }
      ).items;
      return (
        nodes.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length ===
        NODE_COUNT
      );
    },
    o.procs,
    60_000,
    o.logs,
  );
}
