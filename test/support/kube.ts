import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYamlDoc } from 'yaml';
import { apiCreate, apiCreateAsync } from './api-create';
import { apiGet, apiRequest, refusalMessage } from './api-get';

export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The kubeconfig of the test control plane (set by the integration tier's global setup). */
export function testKubeconfig(): string {
  const k = process.env.OPKIT_TEST_KUBECONFIG;
  if (!k)
    throw new Error(
      'OPKIT_TEST_KUBECONFIG is not set: integration tests run under `npm test`, which starts a control plane',
    );
  return k;
}

/** The first cluster of a kubeconfig file: `server` and `certificate-authority-data`. */
export function kubeconfigCluster(file: string): { server: string; 'certificate-authority-data': string } {
  return parseYamlDoc(fs.readFileSync(file, 'utf8')).clusters[0].cluster;
}

/**
 * kubectl against the test cluster, always with an explicit --kubeconfig: the real kubectl, but
 * for `create … -f -` of one JSON object, which is sent as the request kubectl sends and answered
 * as kubectl answers (api-create.ts).
 */
export function kubectl(args: string[], options: { input?: string; kubeconfig?: string } = {}): KubectlResult {
  return apiCreate(args, options.input, options.kubeconfig ?? testKubeconfig()) ?? realKubectl(args, options);
}

/** Runs the real kubectl against the test cluster, always with an explicit --kubeconfig. */
export function realKubectl(args: string[], options: { input?: string; kubeconfig?: string } = {}): KubectlResult {
  const r = spawnSync('kubectl', ['--kubeconfig', options.kubeconfig ?? testKubeconfig(), ...args], {
    input: options.input,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/**
 * kubectl without blocking this process: for calls the API server answers by calling back a
 * server this same process runs (a webhook), which a synchronous call would keep from answering.
 */
export function kubectlAsync(
  args: string[],
  options: { input?: string; kubeconfig?: string } = {},
): Promise<KubectlResult> {
  // `create … -f -` of one object as a request, as kubectl() sends it, awaited here.
  const byRequest = apiCreateAsync(args, options.input, options.kubeconfig ?? testKubeconfig());
  if (byRequest) return byRequest;
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', ['--kubeconfig', options.kubeconfig ?? testKubeconfig(), ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Runs kubectl and throws with its output when it fails. */
export function kubectlOk(args: string[], options: { input?: string; kubeconfig?: string } = {}): string {
  const r = kubectl(args, options);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}):\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/**
 * `kubectl get … -o json`: read from the API directly where that gives what kubectl would
 * (api-get.ts), else by the real kubectl.
 */
function getAsJson(args: string[], options: { kubeconfig?: string }): KubectlResult {
  return apiGet(args, options.kubeconfig ?? testKubeconfig()) ?? kubectl([...args, '-o', 'json'], options);
}

/** Parses `kubectl get -o json`. */
export function getJson(args: string[], options: { kubeconfig?: string } = {}): any {
  const r = getAsJson(args, options);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} -o json failed (${r.code}):\n${r.stderr}${r.stdout}`);
  return JSON.parse(r.stdout);
}

/** Parses `kubectl get -o json`, or undefined when the object does not exist (yet). */
export function getJsonIfExists(args: string[], options: { kubeconfig?: string } = {}): any {
  const r = getAsJson(args, options);
  return r.code === 0 ? JSON.parse(r.stdout) : undefined;
}

/** Whether `kubectl get …` finds the object (read as getJson reads). */
export function exists(args: string[], options: { kubeconfig?: string } = {}): boolean {
  return getAsJson(args, options).code === 0;
}

/**
 * Polls until `check` returns a value (not undefined), or fails with what it last saw and, when
 * given, what `explain` tells at that moment (pods' states, logs).
 */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 30_000,
  intervalMs = 250,
  explain?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs / 1000}s waiting for ${what}${last instanceof Error ? `: ${last.message}` : last !== undefined ? `: ${JSON.stringify(last)}` : ''}${explain ? `\n${explain()}` : ''}`,
      );
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * `kubectl apply --server-side -f dist/`: the kit's CRDs, RBAC and operators, as a user installs
 * them. The integration tier's set-up applies them once to the shared cluster (a second and a
 * half of kubectl's CPU each time, for the same objects); on another cluster this applies them.
 */
export function installDist(options: { kubeconfig?: string } = {}): void {
  const shared = !options.kubeconfig || options.kubeconfig === process.env.OPKIT_TEST_KUBECONFIG;
  if (shared && process.env.OPKIT_TEST_DIST_INSTALLED === '1') return;
  kubectlOk(['apply', '--server-side', '-f', path.resolve(__dirname, '..', '..', 'dist')], options);
}

/**
 * POSTs `body` to `apiPath` on a kept connection (api-get.ts) and returns what the server made;
 * undefined when the kubeconfig is not one api-get reads, for the caller to run kubectl instead.
 * A refusal throws with what kubectl would print, after `what`.
 */
function createByRequest(kubeconfig: string, apiPath: string, body: object, what: string): any {
  const answer = apiRequest(kubeconfig, { method: 'POST', path: apiPath, body });
  if (answer && answer.status !== 201) throw new Error(`${what}: ${refusalMessage(answer)}`);
  return answer && JSON.parse(answer.body);
}

/**
 * Creates a namespace for one test file, with a unique name: a request on the kept connection
 * (`kubectl create namespace` when the kubeconfig is not one api-get reads).
 */
export function createTestNamespace(prefix: string, options: { kubeconfig?: string } = {}): string {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  const body = { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
  const made = createByRequest(
    options.kubeconfig ?? testKubeconfig(),
    '/api/v1/namespaces',
    body,
    `creating namespace ${name}`,
  );
  if (!made) kubectlOk(['create', 'namespace', name], options);
  return name;
}

/**
 * A token of ServiceAccount `serviceAccount` in `namespace` (a TokenRequest, as `kubectl create
 * token` makes), valid for `seconds`.
 */
export function serviceAccountToken(
  namespace: string,
  serviceAccount: string,
  seconds: number,
  options: { kubeconfig?: string } = {},
): string {
  const made = createByRequest(
    options.kubeconfig ?? testKubeconfig(),
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(serviceAccount)}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: seconds } },
    `a token of ${namespace}/${serviceAccount}`,
  );
  if (!made)
    return kubectlOk(['create', 'token', serviceAccount, '-n', namespace, `--duration=${seconds}s`], options).trim();
  return (made as { status: { token: string } }).status.token;
}

/** Whether the test cluster runs pods (kube-scheduler and kwok's simulated nodes). */
export const nodesRun = !!process.env.OPKIT_TEST_NODES;

/**
 * A test that runs only when `canRun`; otherwise it is skipped and its name says why (`reason`),
 * so a run without some part still passes and shows what it did not check.
 */
export function testIf(canRun: boolean, reason: string): (name: string, fn: () => unknown, timeoutMs?: number) => void {
  return (name, fn, timeoutMs) => {
    if (canRun) test(name, fn as () => Promise<void>, timeoutMs);
    else test.skip(`${name} [skipped: ${reason}]`, () => undefined);
  };
}

/** A test that needs pods to run: skipped without simulated nodes. */
export const testWithNodes = testIf(nodesRun, 'no simulated nodes — kube-scheduler or kwok missing, pods never run');

/**
 * Plays an ingress controller, which the test cluster has not: gives an Ingress the address a
 * load balancer would, through its status, as ingress-nginx or a cloud controller does.
 */
export function giveIngressAnAddress(namespace: string, name: string, ip = '192.0.2.10'): void {
  kubectlOk([
    'patch',
    'ingress',
    name,
    '-n',
    namespace,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status: { loadBalancer: { ingress: [{ ip }] } } }),
  ]);
}

/**
 * A HorizontalPodAutoscaler on CPU for `target` (any kind with a scale subresource), and its
 * conditions once it has tried to read the target's scale. With no metrics server here, the HPA
 * gets no further than the metrics: what these conditions say is how it fared with the scale and
 * its selector.
 */
export async function autoscalerConditions(
  namespace: string,
  target: { apiVersion: string; kind: string; name: string },
  replicas: { min: number; max: number },
): Promise<any[]> {
  kubectlOk(['apply', '-n', namespace, '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: target.name },
      spec: {
        scaleTargetRef: target,
        minReplicas: replicas.min,
        maxReplicas: replicas.max,
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
        ],
      },
    }),
  });
  return eventually(
    'the HPA to read the scale',
    () => {
      const conditions = getJsonIfExists(['get', 'hpa', target.name, '-n', namespace])?.status?.conditions;
      return conditions?.some((c: any) => c.type === 'ScalingActive') ? conditions : undefined;
    },
    90_000,
  );
}

/**
 * When the Job controller said `job` completed, as ms since the epoch: its `Completed` Event
 * outlives the Job (a restore Job is pruned once done). NaN when there is none.
 */
export function jobCompletedAt(namespace: string, job: string): number {
  const [event] = getJson([
    'get',
    'events',
    '-n',
    namespace,
    '--field-selector',
    `involvedObject.name=${job},reason=Completed`,
  ]).items;
  return Date.parse(event?.lastTimestamp ?? event?.eventTime ?? '');
}
