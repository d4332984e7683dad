/**
 * Nothing a real node's pods, its containerd or the API server send leaves this machine
 * (testing/node/network.ts): pods have no default route; images are pulled from the node's own
 * registry on loopback, which holds what the node holds and nothing else; the cluster DNS answers the cluster's names and refuses the rest; the API server's calls go only to loopback and the node's network;
 * and with kube-proxy stopped (its rules gone), a Service IP is dropped here rather than routed
 * out towards whatever has that address on the real network. It stops kube-proxy, so it runs last
 * and alone (test/harness/e2e-sequencer.js puts it there; it waits for the rest, run-coordination.ts).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { egressDecisions } from '../../testing/egress-proxy';
import { inCidr, parseCidr } from '../../testing/node/endpoints';
import { NODE_NETWORK } from '../../testing/node/network';
import { PAUSE_IMAGE } from '../../testing/node/real-node';
import { registryLog } from '../../testing/node/registry';
import { processesNaming } from '../../testing/processes';
import { createTestNamespace, eventually, getJson, kubectl, kubectlOk } from '../support/kube';
import { nodeScriptInPod } from '../support/pod-script';
import { afterEveryOtherFile } from './run-coordination';

const skip = process.env.OPKIT_E2E_SKIP;

jest.setTimeout(180_000);

if (skip) test.todo(`a real node's network stays on this machine — skipped: ${skip}`);

/** A script that opens a TCP connection to each target and prints one JSON line per target: connected, or the error. */
function dialScript(targets: readonly string[]): string {
  return `
const net = require('node:net');
const dial = (target) => new Promise((resolve) => {
  const [host, port] = target.split(':');
  const s = net.connect(Number(port), host);
  s.setTimeout(3000, () => { s.destroy(); resolve({ target, result: 'no answer' }); });
  s.on('connect', () => { s.destroy(); resolve({ target, result: 'connected' }); });
  s.on('error', (e) => resolve({ target, result: e.code }));
});
(async () => { for (const t of ${JSON.stringify(targets)}) console.log(JSON.stringify(await dial(t))); })();
`;
}

/** A script that resolves the cluster's names and one outside it with the pod's resolver, printing one JSON line. */
function resolveScript(namespace: string): string {
  return `
const dns = require('node:dns').promises;
const resolver = new dns.Resolver();
const a = (name) => resolver.resolve4(name).then((r) => r[0], (e) => e.code);
(async () => console.log(JSON.stringify({
  service: await a('kubernetes.default.svc.cluster.local'),
  short: await dns.lookup('kubernetes.default', { family: 4 }).then((r) => r.address, (e) => e.code),
  member: await a('member-0.members.${namespace}.svc.cluster.local'),
  outside: await a('example.com.'),
})))();
`;
}

function dialResults(out: string): Record<string, string> {
  return Object.fromEntries(
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { target: string; result: string })
      .map((r) => [r.target, r.result]),
  );
}

/** The machine's own default gateway: an address off this machine every test must never reach. */
function defaultGateway(): string {
  const route = execFileSync('ip', ['-4', 'route', 'show', 'default'], { encoding: 'utf8' });
  return /via (\S+)/.exec(route)?.[1] ?? '192.0.2.1';
}

/** A mangle rule that only counts packets to the Service range leaving through any interface but the node's bridge. */
const COUNTER = [
  'POSTROUTING',
  '-d',
  NODE_NETWORK.serviceCidr,
  '!',
  '-o',
  NODE_NETWORK.bridge,
  '-m',
  'comment',
  '--comment',
  'opkit-e2e-count',
];

function counted(): number {
  const out = execFileSync('iptables', ['-t', 'mangle', '-L', 'POSTROUTING', '-v', '-x', '-n'], { encoding: 'utf8' });
  const line = out.split('\n').find((l) => l.includes('opkit-e2e-count'));
  return Number(line?.trim().split(/\s+/)[0] ?? NaN);
}

/** Host-side connect: resolves with the error code, or 'connected'. */
function hostDial(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, host);
    s.setTimeout(3000, () => {
      s.destroy();
      resolve('no answer');
    });
    s.on('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.on('error', (e: NodeJS.ErrnoException) => {
      resolve(e.code ?? e.message);
    });
  });
}

(skip ? describe.skip : describe)("a real node's network stays on this machine", () => {
  let ns: string;

  // Stopping kube-proxy changes the node for every file after this one: it waits until the files
  // running beside it (two at a time) have all finished — the tier's length at most.
  beforeAll(() => afterEveryOtherFile(__filename), 40 * 60_000);

  beforeAll(() => {
    ns = createTestNamespace('e2e-network');
    kubectlOk(['create', 'serviceaccount', 'dialer', '-n', ns]);
  });

  afterAll(() => {
    spawnSync('iptables', ['-t', 'mangle', '-D', ...COUNTER]);
    if (ns) kubectl(['delete', 'namespace', ns, '--wait=false']);
  });

  test("a pod has no way off the machine: the machine's gateway and the internet are unreachable from it", async () => {
    const gateway = `${defaultGateway()}:80`;
    const results = dialResults(await nodeScriptInPod(ns, 'dialer', dialScript([gateway, '1.1.1.1:443'])));
    // No default route in the pod: the kernel refuses at once, nothing is sent.
    expect(results).toEqual({ [gateway]: 'ENETUNREACH', '1.1.1.1:443': 'ENETUNREACH' });
  });

  test("an image pulled at every start (busybox, :latest, so Always) is pulled from the node's own registry, and runs", async () => {
    kubectlOk([
      'run',
      'latest',
      '-n',
      ns,
      '--image=busybox',
      '--restart=Never',
      '--',
      'sh',
      '-c',
      'echo ran on the node',
    ]);
    const phase = await eventually(
      'the pod to end',
      () => {
        const p = getJson(['get', 'pod', 'latest', '-n', ns]).status?.phase as string | undefined;
        return p === 'Succeeded' || p === 'Failed' ? p : undefined;
      },
      60_000,
    );
    expect(getJson(['get', 'pod', 'latest', '-n', ns]).spec.containers[0].imagePullPolicy).toBe('Always');
    expect(phase).toBe('Succeeded');
    expect(kubectlOk(['logs', 'latest', '-n', ns]).trim()).toBe('ran on the node');
    const events = getJson(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=latest']).items;
    expect(events.map((e: any) => e.reason)).toContain('Pulled');
  });

  test('an image the node does not hold is never pulled from off the machine: the pull fails on loopback', async () => {
    kubectlOk(['run', 'not-loaded', '-n', ns, '--image=registry.example.com/not-loaded:1', '--restart=Never']);
    const message = await eventually(
      'the pull to fail',
      () => {
        const events = getJson(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=not-loaded']);
        return events.items.find((e: any) => e.reason === 'Failed' && /Failed to pull/.test(e.message))?.message as
          string | undefined;
      },
      60_000,
    );
    expect(message).toContain('registry.example.com/not-loaded:1: not found');
    // Asked of the node's own registry on loopback, which holds only the node's images, never of registry.example.com.
    const asked = fs
      .readFileSync(registryLog(path.join(process.env.OPKIT_E2E_WORK_DIR ?? '', 'node')), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { path: string; ns: string; status: number });
    expect(asked).toContainEqual(
      expect.objectContaining({ path: '/v2/not-loaded/manifests/1', ns: 'registry.example.com', status: 404 }),
    );
  });

  test("cluster DNS answers the cluster's names from the API server and refuses every other name here, forwarding none", async () => {
    // A member of a headless Service, as a StatefulSet's pod is: <hostname>.<subdomain>.<namespace>.svc.
    kubectlOk(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'members' },
            spec: {
              clusterIP: 'None',
              publishNotReadyAddresses: true,
              selector: { app: 'members' },
              ports: [{ port: 80 }],
            },
          },
          {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: 'member-0', labels: { app: 'members' } },
            spec: {
              hostname: 'member-0',
              subdomain: 'members',
              securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
              containers: [
                {
                  name: 'pause',
                  image: PAUSE_IMAGE,
                  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
                },
              ],
            },
          },
        ],
      }),
    });
    const memberIp = await eventually(
      'member-0 to have an address',
      () => getJson(['get', 'pod', 'member-0', '-n', ns]).status?.podIP as string | undefined,
      60_000,
    );
    const answers = await eventually(
      'the member to be published',
      async () => {
        const out = JSON.parse(
          (await nodeScriptInPod(ns, 'dialer', resolveScript(ns))).split('\n').find((l) => l.startsWith('{')) ?? '{}',
        ) as Record<string, string>;
        return out.member === memberIp ? out : undefined;
      },
      60_000,
    );
    expect(answers).toEqual({
      // The kubernetes Service by its full name, and by the short one through the pod's search list.
      service: '10.0.0.1',
      short: '10.0.0.1',
      member: memberIp,
      // No forwarding plugin is built in: a name outside the cluster is refused by the node's DNS itself.
      outside: 'EREFUSED',
    });
  });

  test("the API server's calls went only to loopback and the node's network", () => {
    const decisions = egressDecisions(process.env.OPKIT_TEST_EGRESS_LOG ?? '');
    const node = parseCidr(NODE_NETWORK.cidr)!;
    const through = decisions.filter((d) => d.via);
    // The earlier file's conversion and log calls went through to the node.
    expect(through.some((d) => d.decision === 'node')).toBe(true);
    for (const d of through) {
      const host = d.via!.slice(0, d.via!.lastIndexOf(':'));
      expect({ via: d.via, local: host === '127.0.0.1' || inCidr(host, node) }).toEqual({ via: d.via, local: true });
    }
  });

  test('with kube-proxy stopped and its rules gone, a Service IP is dropped here, from a pod and from the machine', async () => {
    const workDir = process.env.OPKIT_E2E_WORK_DIR ?? '';
    const proxy = processesNaming(workDir).find((p) => p.args[0]?.endsWith('/kube-proxy'));
    expect(proxy).toBeDefined();
    process.kill(proxy!.pid, 'SIGKILL');
    // A signal is sent at once, its process gone later; an iptables-restore it started may still
    // hold the xtables lock. `--cleanup` once failed in a CI run, its output unread: it runs
    // until it succeeds, and says why it did not.
    await eventually('the killed kube-proxy gone', () => (running(proxy!.pid) ? undefined : true));
    let cleanup = '';
    await eventually(
      'kube-proxy --cleanup to succeed',
      () => {
        const ran = spawnSync(proxy!.args[0]!, ['--cleanup'], { encoding: 'utf8' });
        cleanup = `exit ${String(ran.status)}: ${ran.stderr.split('\n').slice(-5).join('\n')}`;
        return ran.status === 0 ? true : undefined;
      },
      30_000,
      500,
      () => cleanup,
    );
    expect(execFileSync('iptables-save', ['-t', 'nat'], { encoding: 'utf8' })).not.toMatch(/KUBE-SVC-/);
    execFileSync('iptables', ['-t', 'mangle', '-I', ...COUNTER]);
    // The `kubernetes` Service's IP, which a pod would otherwise reach the API server through.
    const service = '10.0.0.1:443';
    expect(dialResults(await nodeScriptInPod(ns, 'dialer', dialScript([service])))).toEqual({ [service]: 'no answer' });
    // From this machine the blackhole route refuses it outright.
    expect(execFileSync('ip', ['route', 'show', NODE_NETWORK.serviceCidr], { encoding: 'utf8' })).toMatch(
      /^blackhole /,
    );
    expect(await hostDial('10.0.0.1', 443)).toBe('EINVAL');
    // Not one packet for the Service range was routed anywhere.
    expect(counted()).toBe(0);
  });
});

/** Whether `pid` is a process still running (a zombie, dead but not yet reaped by its parent, is not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
