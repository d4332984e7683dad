import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from '../../testing/control-plane';
import { bundledSource, isRepositorySource } from './bundle-sources';
import { eventually, getJson, kubeconfigCluster, kubectlOk, serviceAccountToken, testKubeconfig } from './kube';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * A kubeconfig that authenticates as the operator's own ServiceAccount (a TokenRequest token),
 * so the reconciler under test has exactly the RBAC that dist/ grants, nothing more.
 * `server` overrides the API server address (e.g. a proxy in front of it).
 */
export function serviceAccountKubeconfig(
  options: { server?: string; kubeconfig?: string; namespace?: string; serviceAccount?: string } = {},
): string {
  const admin = options.kubeconfig ?? testKubeconfig();
  const ns = options.namespace ?? 'memcached-system';
  const sa = options.serviceAccount ?? 'memcached-operator';
  const token = serviceAccountToken(ns, sa, 2 * 3600, { kubeconfig: admin });
  const cluster = kubeconfigCluster(admin);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-sa-')), 'kubeconfig');
  fs.writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'c',
          cluster: {
            server: options.server ?? cluster.server,
            'certificate-authority-data': cluster['certificate-authority-data'],
          },
        },
      ],
      users: [{ name: 'sa', user: { token } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'sa' } }],
      'current-context': 'c',
    }),
    { mode: 0o600 },
  );
  return file;
}

/** A response's status and whole body as text. */
function readResponse(res: http.IncomingMessage): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => {
      body += c;
    });
    res.on('end', () => {
      resolve({ status: res.statusCode ?? 0, body });
    });
  });
}

export function httpGet(url: string, timeoutMs = 2000): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      void readResponse(res).then(resolve);
    });
    req.on('error', () => {
      resolve({ status: 0, body: '' });
    });
    req.on('timeout', () => {
      req.destroy();
      resolve({ status: 0, body: '' });
    });
  });
}

/** Waits until a reconciler (a process, or podman running its container) passes /readyz. */
export async function waitUntilReady(
  name: string,
  child: ChildProcess,
  logs: readonly string[],
  healthPort: number,
  timeoutMs: number,
): Promise<void> {
  await eventually(
    `${name} to be ready`,
    async () => {
      if (child.exitCode !== null) throw new Error(`exited early:\n${logs.join('\n')}`);
      return (await httpGet(`http://127.0.0.1:${healthPort}/readyz`)).status === 200 ? true : undefined;
    },
    timeoutMs,
  );
}

/** The identity a reconciler logged at start ("starting manager"): its POD_NAME and a random suffix. */
export function identityInLogs(name: string, logs: readonly string[]): string {
  for (const line of logs) {
    if (!line.includes('"starting manager"')) continue;
    const id = (JSON.parse(line) as { identity?: unknown }).identity;
    if (typeof id === 'string') return id;
  }
  throw new Error(`${name} has not logged its identity:\n${logs.join('\n')}`);
}

/**
 * Creates ServiceAccount `serviceAccount` in `namespace` and binds it to the Memcached operator's
 * metrics-reader ClusterRole; returns the binding's name (cluster-scoped: delete it afterwards).
 */
export function bindMetricsReader(namespace: string, serviceAccount: string): string {
  const binding = `metrics-reader-${namespace}`;
  kubectlOk(['create', 'serviceaccount', serviceAccount, '-n', namespace]);
  kubectlOk([
    'create',
    'clusterrolebinding',
    binding,
    '--clusterrole=memcached-metrics-reader',
    `--serviceaccount=${namespace}:${serviceAccount}`,
  ]);
  return binding;
}

/** The shard a reconciler holds, from its /metrics page (its `opkit_shard` series); undefined for a standby. */
export function shardHeldIn(metricsPage: string): number | undefined {
  const line = metricsPage.split('\n').find((l) => l.startsWith('opkit_shard{') && l.endsWith(' 1'));
  const m = line && /shard="(\d+)"/.exec(line);
  return m ? Number(m[1]) : undefined;
}

/**
 * How to run `entry`: reconciler.ts as the run's bundle of it, when the tier's set-up built one
 * (a second of CPU less per process than compiling the kit through tsx, with the same code);
 * another source of this repository bundled for the run likewise (bundle-sources.ts); anything
 * else, or outside a test run, through tsx.
 */
async function reconcilerEntry(entry?: string): Promise<string[]> {
  const bundle = process.env.OPKIT_TEST_RECONCILER_BUNDLE;
  if (!entry && bundle) return ['--enable-source-maps', bundle];
  const file = entry ?? path.join(ROOT, 'reconciler.ts');
  if (process.env.OPKIT_RUN_TMPDIR && isRepositorySource(file))
    return ['--enable-source-maps', await bundledSource(file)];
  return ['--import', 'tsx', file];
}

/** The reconciler (reconciler.ts) as a child process, with its logs and endpoints. */
export class ReconcilerProcess {
  readonly logs: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    readonly child: ChildProcess,
    readonly healthPort: number,
    readonly metricsPort: number,
    readonly name: string,
  ) {
    const collect = (chunk: Buffer) => this.logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    this.exited = new Promise((r) =>
      child.once('exit', (code, signal) => {
        r({ code, signal });
      }),
    );
  }

  /**
   * Starts reconciler.ts or `entry` (bundled for the run, or with tsx), or with
   * `bundle: true` the minified bundle the image runs (build it first with `npm run bundle`).
   */
  static async start(options: {
    kubeconfig: string;
    args?: string[];
    name?: string;
    bundle?: boolean;
    entry?: string;
    env?: Record<string, string>;
  }): Promise<ReconcilerProcess> {
    const [healthPort, metricsPort] = [await freePort(), await freePort()];
    const name = options.name ?? `reconciler-${Math.random().toString(36).slice(2, 7)}`;
    const entry = options.bundle
      ? [path.join(ROOT, 'build', 'reconciler', 'main.js')]
      : await reconcilerEntry(options.entry);
    const child = spawn(
      process.execPath,
      [
        ...entry,
        `--kubeconfig=${options.kubeconfig}`,
        `--health-probe-bind-address=127.0.0.1:${healthPort}`,
        `--metrics-bind-address=127.0.0.1:${metricsPort}`,
        // Tests read metrics over plain HTTP (and TokenReviews would show up as writes in the audit
        // log); the secure default has its own test.
        ...((options.args ?? []).some((a) => a.startsWith('--metrics-secure')) ? [] : ['--metrics-secure=false']),
        ...(options.args ?? []),
      ],
      {
        cwd: ROOT,
        env: { ...process.env, POD_NAME: name, KUBECONFIG: '', ...options.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const proc = new ReconcilerProcess(child, healthPort, metricsPort, name);
    try {
      await waitUntilReady(name, child, proc.logs, healthPort, 60_000);
    } catch (err) {
      // A process that never got ready must not outlive the test (jest would wait on it).
      await proc.stop('SIGKILL');
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n${proc.logs.slice(-20).join('\n')}`, {
        cause: err,
      });
    }
    return proc;
  }

  /**
   * The identity the process logged at start (its POD_NAME and a random suffix): it leads under
   * it, and names it in its User-Agent, so the audit log tells its writes from other processes'.
   */
  get identity(): string {
    return identityInLogs(this.name, this.logs);
  }

  /**
   * The /metrics page. A scrape that gets no answer (a process slow on a busy machine) is tried
   * again until one succeeds: read as an empty page, every metric in it would be 0.
   */
  scrape(): Promise<string> {
    return eventually(
      `${this.name}'s /metrics`,
      async () => {
        const { status, body } = await httpGet(`http://127.0.0.1:${this.metricsPort}/metrics`, 10_000);
        return status === 200 ? body : undefined;
      },
      60_000,
    );
  }

  /** One metric's value (summed over the series whose labels include `labels`). */
  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    const body = await this.scrape();
    let total = 0;
    for (const line of body.split('\n')) {
      if (!line.startsWith(name)) continue;
      const m = /^([a-zA-Z_:]+)(\{([^}]*)\})?\s+(\S+)$/.exec(line);
      if (m?.[1] !== name) continue;
      const lbls = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
      if (Object.entries(labels).every(([k, v]) => lbls[k] === v)) total += Number(m[4]);
    }
    return total;
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}

export { TcpProxy } from '../../testing/tcp-proxy';

/** GET /metrics over TLS (the reconciler's certificate is self-signed), with an optional token. */
export function scrapeMetrics(port: number, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      {
        host: '127.0.0.1',
        port,
        path: '/metrics',
        rejectUnauthorized: false,
        headers: token ? { Authorization: `Bearer ${token}` } : {},
        timeout: 10_000,
      },
      (res) => {
        void readResponse(res).then(resolve);
      },
    );
    req.on('error', reject);
  });
}

/**
 * Log lines (JSON objects) that name a top-level key twice, with that key: JSON tools keep one
 * value and lose the other. Lines that are not JSON objects are skipped.
 */
export function linesRepeatingAKey(logs: readonly string[]): string[] {
  const out: string[] = [];
  for (const line of logs) {
    if (!line.startsWith('{')) continue;
    const seen = new Set<string>();
    let depth = 0;
    // Top-level keys: a string followed by ':' at depth 1, skipping string contents.
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (c === '"') {
        let j = i + 1;
        while (j < line.length && line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
        if (depth === 1 && line[j + 1] === ':') {
          const key = line.slice(i + 1, j);
          if (seen.has(key)) out.push(`${key}: ${line.slice(0, 300)}`);
          seen.add(key);
        }
        i = j;
      } else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') depth--;
    }
  }
  return out;
}

/**
 * The reconciler a release installed, run as its Deployment runs it: its args (its health,
 * metrics and webhook endpoints on free loopback ports, as every reconciler of the suite has
 * them) and its ServiceAccount's token, so exactly the RBAC the chart installed.
 */
export async function startInstalledReconciler(releaseNs: string, operator: string): Promise<ReconcilerProcess> {
  const deployment = getJson(['get', 'deployment', operator, '-n', releaseNs]);
  const webhookPort = await freePort();
  const args: string[] = deployment.spec.template.spec.containers[0].args
    .filter((a: string) => !/^--(health-probe|metrics)-bind-address=/.test(a))
    .map((a: string) =>
      a.startsWith('--webhook-bind-address=') ? `--webhook-bind-address=127.0.0.1:${webhookPort}` : a,
    );
  return ReconcilerProcess.start({
    kubeconfig: serviceAccountKubeconfig({ namespace: releaseNs, serviceAccount: operator }),
    args,
    env: { POD_NAMESPACE: releaseNs },
  });
}
