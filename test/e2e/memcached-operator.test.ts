/**
 * The memcached operator as a user installs it — `kubectl apply -f dist/` — on a real node: the
 * reconciler runs as a Pod from the image the kit's `image` command built, under the restricted
 * Pod Security level, reaching the API server through the `kubernetes` Service with its mounted
 * ServiceAccount token; its children's pods run real memcached.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { egressDecisions } from '../../testing/egress-proxy';
import { nodeScriptInPod } from '../support/pod-script';
import {
  createTestNamespace,
  eventually,
  getJson,
  getJsonIfExists,
  kubeconfigCluster,
  kubectl,
  kubectlOk,
  testKubeconfig,
} from '../support/kube';

const SYSTEM = 'memcached-system';
const skip = process.env.OPKIT_E2E_SKIP;

jest.setTimeout(180_000);

if (skip) test.todo(`the operator on a real node — skipped: ${skip}`);

/** The operator's pods, by name. */
function operatorPods(): any[] {
  return getJson(['get', 'pods', '-n', SYSTEM, '-l', 'app.kubernetes.io/name=memcached']).items;
}

function ready(pod: any): boolean {
  return pod.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** The Lease's holder: `<pod name>_<suffix>`. */
function leaderPod(): string | undefined {
  const lease = getJsonIfExists(['get', 'lease', 'memcached-operator-leader', '-n', SYSTEM]);
  return lease?.spec?.holderIdentity?.split('_')[0];
}

/** Sends one memcached text command over TCP; resolves with the first line of the answer. */
function memcachedCommand(host: string, port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host, () => socket.write(`${command}\r\n`));
    let answer = '';
    socket.setEncoding('utf8');
    socket.setTimeout(10_000, () => {
      socket.destroy(new Error(`no answer from ${host}:${String(port)}`));
    });
    socket.on('data', (d: string) => {
      answer += d;
      if (answer.includes('\r\n')) {
        socket.end();
        resolve(answer.split('\r\n')[0] ?? '');
      }
    });
    socket.on('error', reject);
  });
}

/** A script that GETs `url` with the pod's ServiceAccount token and prints `<status>\n<body>`. */
function scrapeScript(url: string): string {
  return `
const https = require('node:https');
const token = require('node:fs').readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/token', 'utf8');
https.get(${JSON.stringify(url)}, { rejectUnauthorized: false, headers: { Authorization: 'Bearer ' + token } }, (res) => {
  let body = '';
  res.on('data', (c) => (body += c));
  res.on('end', () => console.log(res.statusCode + '\\n' + body));
}).on('error', (e) => console.log('0\\n' + e.message));
`;
}

(skip ? describe.skip : describe)('the memcached operator on a real node', () => {
  let ns: string;

  beforeAll(async () => {
    ns = createTestNamespace('e2e-memcached');
    await eventually('the operator pod Ready', () => (operatorPods().some(ready) ? true : undefined), 120_000);
  });

  test('the operator pod runs its image under the restricted Pod Security level, Ready through its probes', () => {
    const namespace = getJson(['get', 'namespace', SYSTEM]);
    expect(namespace.metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
    const [pod] = operatorPods();
    expect(pod.spec.nodeName).toBe('opkit-node');
    expect(pod.status.phase).toBe('Running');
    const status = pod.status.containerStatuses[0];
    expect({ ready: status.ready, restarts: status.restartCount, running: !!status.state.running }).toEqual({
      ready: true,
      restarts: 0,
      running: true,
    });
    const container = pod.spec.containers[0];
    expect(container.readinessProbe.httpGet).toBeDefined();
    expect(container.livenessProbe.httpGet).toBeDefined();
    // It talked to the API server as its ServiceAccount: it holds the leader Lease.
    expect(leaderPod()).toBe(pod.metadata.name);
  });

  test("a Memcached's pods run real memcached on the port it names, and its status lists them", async () => {
    kubectlOk(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'cache.example.com/v1',
        kind: 'Memcached',
        metadata: { name: 'cache' },
        spec: { size: 2, image: 'memcached:1.6', containerPort: 11212 },
      }),
    });
    kubectlOk(['wait', '-n', ns, '--for=condition=Ready', '--timeout=120s', 'memcached/cache']);
    const pods = getJson(['get', 'pods', '-n', ns, '-l', 'app.kubernetes.io/instance=cache']).items;
    const memcached = getJson(['get', 'memcached', 'cache', '-n', ns]);
    expect([...memcached.status.nodes].sort()).toEqual(pods.map((p: any) => p.metadata.name).sort());
    for (const pod of pods) {
      // memcached itself answers, at the pod's address (on the node's bridge, reachable from here).
      expect(await memcachedCommand(pod.status.podIP, 11212, 'version')).toMatch(/^VERSION 1\.6\./);
    }
  });

  test('conversion is served by the operator pod, through the webhook Service', () => {
    const [pod] = operatorPods();
    // Read at the other served version: the API server converts through the CRD's webhook Service.
    const old = getJson(['get', 'memcacheds.v1alpha1.cache.example.com', 'cache', '-n', ns]);
    expect(old.apiVersion).toBe('cache.example.com/v1alpha1');
    expect(old.spec.size).toBe(2);
    // The API server keeps its connection to the webhook open: the call that opened it is in the log.
    const calls = egressDecisions(process.env.OPKIT_TEST_EGRESS_LOG ?? '');
    expect(calls).toContainEqual(
      expect.objectContaining({
        service: 'memcached-webhook.memcached-system.svc:443',
        decision: 'node',
        via: `${pod.status.podIP as string}:9443`,
      }),
    );
  });

  test('/metrics answers through the metrics Service, from a pod, to a token allowed to read it and no other', async () => {
    const service = getJson(['get', 'service', 'memcached-metrics', '-n', SYSTEM]);
    // The Service by its name, as a Prometheus in the cluster would: the node's cluster DNS answers its
    // cluster IP, and kube-proxy's rules take the connection to the pod.
    const url = `https://memcached-metrics.${SYSTEM}.svc:${String(service.spec.ports[0].port)}/metrics`;
    kubectlOk(['create', 'serviceaccount', 'scraper', '-n', ns]);
    const refused = await nodeScriptInPod(ns, 'scraper', scrapeScript(url));
    expect(refused.split('\n')[0]).toBe('403');
    kubectlOk([
      'create',
      'clusterrolebinding',
      `scraper-${ns}`,
      '--clusterrole=memcached-metrics-reader',
      `--serviceaccount=${ns}:scraper`,
    ]);
    try {
      const scraped = await eventually(
        'a scrape allowed',
        async () => {
          const out = await nodeScriptInPod(ns, 'scraper', scrapeScript(url));
          return out.startsWith('200\n') ? out : undefined;
        },
        120_000,
      );
      expect(scraped).toMatch(/^controller_runtime_reconcile_total\{controller="memcached"/m);
    } finally {
      kubectl(['delete', 'clusterrolebinding', `scraper-${ns}`]);
    }
  });

  test('with two replicas, deleting the leader pod hands the lease to the other, and the deleted one exits cleanly on SIGTERM', async () => {
    kubectlOk(['scale', 'deployment', 'memcached-operator', '-n', SYSTEM, '--replicas=2']);
    await eventually(
      'two operator pods Ready',
      () => (operatorPods().filter(ready).length === 2 ? true : undefined),
      120_000,
    );
    const leader = leaderPod();
    expect(leader).toBeDefined();
    // Its log, followed until the container exits.
    const logs = spawn('kubectl', ['--kubeconfig', testKubeconfig(), 'logs', '-f', '-n', SYSTEM, leader ?? '']);
    let output = '';
    logs.stdout.on('data', (d: Buffer) => (output += d.toString()));
    const ended = new Promise<void>((resolve) =>
      logs.on('close', () => {
        resolve();
      }),
    );
    await eventually('the log stream open', () => (output.length > 0 ? true : undefined));
    kubectlOk(['delete', 'pod', leader ?? '', '-n', SYSTEM, '--wait=false']);
    const next = await eventually(
      'another pod leads',
      () => {
        const holder = leaderPod();
        return holder && holder !== leader ? holder : undefined;
      },
      60_000,
    );
    expect(operatorPods().map((p) => p.metadata.name)).toContain(next);
    await ended;
    const lines = output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: 'shutting down: no new work; waiting for in-flight reconciles',
        reason: 'signal',
      }),
    );
    // Released only on a clean stop (a lost lease or a crash keeps it): the other took over at once.
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'released leader lease' }));
    // `kubectl logs -f` may end a moment before the container's very last line is read.
    const stopped = lines.filter((l) => l.msg === 'manager stopped');
    expect(stopped.every((l) => l.exitCode === 0)).toBe(true);
    kubectlOk(['scale', 'deployment', 'memcached-operator', '-n', SYSTEM, '--replicas=1']);
  });

  afterAll(() => {
    if (ns) kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  test("the tier's kubectl calls keep their caches in a directory of its own, not in ~/.kube/cache", () => {
    kubectlOk(['get', 'namespace', SYSTEM, '-o', 'name']);
    const address = new URL(kubeconfigCluster(testKubeconfig()).server).host.replace(':', '_');
    const cache = process.env.KUBECACHEDIR ?? path.join(os.homedir(), '.kube', 'cache');
    expect(fs.existsSync(path.join(cache, 'discovery', address))).toBe(true);
    expect(fs.existsSync(path.join(os.homedir(), '.kube', 'cache', 'discovery', address))).toBe(false);
  });
});
