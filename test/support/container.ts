/**
 * A reconciler image run with podman the way a synthesized Deployment runs it: the container's
 * args, env, user, read-only root file system, capabilities and volumes, and in-cluster
 * configuration (a ServiceAccount token and the CA at the standard path, KUBERNETES_SERVICE_HOST
 * and PORT pointing at the test API server on loopback, host network).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { have } from '../../command/image/tools';
import { freePort } from '../../testing/control-plane';
import { kubeconfigCluster, serviceAccountToken, testKubeconfig } from './kube';
import { identityInLogs, waitUntilReady } from './reconciler';
import { commandArgs } from './command';

const ROOT = path.resolve(__dirname, '..', '..');

/** What the image tests need that the machine may lack, or undefined when all is there. */
export function missingContainerTools(): string | undefined {
  const missing = ['mmdebstrap', 'buildah', 'podman', 'runc'].filter((p) => !have(p));
  return missing.length
    ? `${missing.join(', ')} not installed (.ci/run installs them from the distribution)`
    : undefined;
}

/**
 * podman's settings for this machine: runc (crun refuses its hybrid cgroups), cgroupfs, events
 * in a file, and ulimits the sandbox allows.
 */
function containersConf(): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-podman-')), 'containers.conf');
  fs.writeFileSync(
    file,
    [
      '[containers]',
      'default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]',
      '[engine]',
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      '',
    ].join('\n'),
  );
  return file;
}

/** Builds an image with the package's command; returns its archive and digest. */
export function buildImage(options: { entry: string; tag: string; outDir: string; cwd?: string; bin?: string[] }): {
  archive: string;
  digest: string;
  layers: { size: number }[];
  contents: { baseSystem: number; node: number; bundle: number };
} {
  const command = options.bin ?? [process.execPath, ...commandArgs()];
  const [program = '', ...args] = command;
  const r = spawnSync(
    program,
    [
      ...args,
      'image',
      '--entry',
      options.entry,
      '--tag',
      options.tag,
      '--output',
      options.outDir,
      '--no-load',
      '--json',
    ],
    { cwd: options.cwd ?? ROOT, encoding: 'utf8', timeout: 300_000 },
  );
  if (r.status !== 0) throw new Error(`image build failed (${String(r.status)}):\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** A Deployment of a synthesized manifest file: the one named `name`, or the first. */
export function deploymentIn(file: string, name?: string): any {
  const found = parseAllDocuments(fs.readFileSync(file, 'utf8'))
    .map((d) => d.toJSON())
    .find((o) => o?.kind === 'Deployment' && (name === undefined || o.metadata.name === name));
  if (!found) throw new Error(`no Deployment ${name ?? ''} in ${file}`);
  return found;
}

/** A ServiceAccount's mount as the kubelet makes it: token, ca.crt, namespace. */
function serviceAccountMount(namespace: string, serviceAccount: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-sa-mount-'));
  fs.chmodSync(dir, 0o755);
  const token = serviceAccountToken(namespace, serviceAccount, 3600);
  const cluster = kubeconfigCluster(testKubeconfig());
  fs.writeFileSync(path.join(dir, 'token'), token, { mode: 0o644 });
  fs.writeFileSync(path.join(dir, 'ca.crt'), Buffer.from(cluster['certificate-authority-data'], 'base64'), {
    mode: 0o644,
  });
  fs.writeFileSync(path.join(dir, 'namespace'), namespace, { mode: 0o644 });
  return dir;
}

/** `--flag=value` replaced in a list of args (or added when absent). */
function withArg(args: string[], flag: string, value: string): string[] {
  const rest = args.filter((a) => !a.startsWith(`${flag}=`));
  return [...rest, `${flag}=${value}`];
}

/** The reconciler container, started from an image archive as `deployment` would run it. */
export class ReconcilerContainer {
  readonly logs: string[] = [];
  readonly exited: Promise<number | null>;

  private constructor(
    readonly name: string,
    readonly process: ChildProcess,
    readonly healthPort: number,
    readonly metricsPort: number,
    readonly gracePeriodSeconds: number,
    private readonly podman: (args: string[]) => ReturnType<typeof spawnSync>,
  ) {
    const collect = (chunk: Buffer) => this.logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    process.stdout!.on('data', collect);
    process.stderr!.on('data', collect);
    this.exited = new Promise((r) =>
      process.once('exit', (code) => {
        r(code);
      }),
    );
  }

  /**
   * Runs the archive's image with the Deployment's container spec. Two changes, both forced by
   * the host network every test shares: the probe, metrics and webhook ports are free ones, and
   * `--namespace` keeps it to the test's namespace (other suites' resources are not its own).
   */
  static async start(options: { archive: string; deployment: any; namespace: string }): Promise<ReconcilerContainer> {
    const { deployment } = options;
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];
    const sc = { ...pod.securityContext, ...container.securityContext };
    const [healthPort, metricsPort, webhookPort] = [await freePort(), await freePort(), await freePort()];
    const name = `opkit-${Math.random().toString(36).slice(2, 8)}`;
    const env: Record<string, string> = {};
    for (const e of container.env ?? []) {
      const field = e.valueFrom?.fieldRef?.fieldPath;
      env[e.name] =
        field === 'metadata.name' ? name : field === 'metadata.namespace' ? deployment.metadata.namespace : e.value;
    }
    const server = new URL(kubeconfigCluster(testKubeconfig()).server);
    env.KUBERNETES_SERVICE_HOST = server.hostname;
    env.KUBERNETES_SERVICE_PORT = server.port;
    let args: string[] = container.args ?? [];
    args = withArg(args, '--health-probe-bind-address', `127.0.0.1:${healthPort}`);
    args = withArg(args, '--metrics-bind-address', `127.0.0.1:${metricsPort}`);
    if (args.some((a) => a.startsWith('--webhook-bind-address=')))
      args = withArg(args, '--webhook-bind-address', `127.0.0.1:${webhookPort}`);
    args = withArg(args, '--namespace', options.namespace);
    const mounts = (container.volumeMounts ?? []).map((m: any) => {
      const volume = pod.volumes.find((v: any) => v.name === m.name);
      if (!volume?.emptyDir) throw new Error(`volume ${m.name}: only emptyDir is supported here`);
      const size = volume.emptyDir.sizeLimit ? `,size=${String(volume.emptyDir.sizeLimit).replace(/i$/, '')}` : '';
      return ['--tmpfs', `${m.mountPath}:rw,mode=1777${size}`];
    });
    const saDir = serviceAccountMount(deployment.metadata.namespace, pod.serviceAccountName);
    const conf = containersConf();
    const podman = (a: string[]) =>
      spawnSync('podman', a, { env: { ...process.env, CONTAINERS_CONF: conf }, encoding: 'utf8', timeout: 120_000 });
    const runArgs = [
      'run',
      '--rm',
      '--name',
      name,
      '--network=host',
      `--user=${sc.runAsUser}:${sc.runAsGroup ?? sc.runAsUser}`,
      ...(sc.readOnlyRootFilesystem ? ['--read-only'] : []),
      ...(sc.capabilities?.drop ?? []).map((c: string) => `--cap-drop=${c}`),
      ...(sc.allowPrivilegeEscalation === false ? ['--security-opt=no-new-privileges'] : []),
      ...mounts.flat(),
      ...(pod.automountServiceAccountToken === false
        ? []
        : ['-v', `${saDir}:/var/run/secrets/kubernetes.io/serviceaccount:ro`]),
      ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
      `oci-archive:${options.archive}`,
      ...args,
    ];
    const child = spawn('podman', runArgs, {
      env: { ...process.env, CONTAINERS_CONF: conf },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const c = new ReconcilerContainer(
      name,
      child,
      healthPort,
      metricsPort,
      pod.terminationGracePeriodSeconds ?? 30,
      podman,
    );
    await waitUntilReady(name, child, c.logs, healthPort, 90_000);
    return c;
  }

  /** The identity it logged at start (its POD_NAME and a random suffix). */
  get identity(): string {
    return identityInLogs(this.name, this.logs);
  }

  /**
   * Stops it as the kubelet would: SIGTERM, then SIGKILL after the grace period. Resolves to the
   * exit code and how long it took.
   */
  async stop(): Promise<{ code: number | null; seconds: number }> {
    const started = Date.now();
    this.podman(['stop', '--time', String(this.gracePeriodSeconds), this.name]);
    const code = await this.exited;
    return { code, seconds: (Date.now() - started) / 1000 };
  }

  /** The host's pid of the reconciler (the container's first process). */
  pid(): number {
    return Number(String(this.podman(['inspect', '--format', '{{.State.Pid}}', this.name]).stdout).trim());
  }
}
