/**
 * The real node's network, made so that nothing can leave this machine:
 *
 * - the node lives on a bridge of its own (`NODE_NETWORK.bridge`), with no route off the machine;
 * - pods get an address on it and a route to the Service range only: no default route;
 * - the Service range is a blackhole route on the host, so a Service IP that kube-proxy has no rule
 *   for is dropped here, never routed out towards whatever has that address on the real network;
 * - IPv4 forwarding is on for the bridge only (the machine's stays as it was), and a rule drops
 *   anything from the bridge that would leave through another interface;
 * - a connection to a Service IP that was sent anywhere but the node's network (an endpoint a
 *   user wrote by hand, say) is dropped on its way out, from pods and from this machine alike.
 *
 * The rules are in the mangle table, which kube-proxy leaves alone: in the filter table its own
 * rules go first and accept the Service traffic they mark before any rule of ours is read.
 *
 * Every change is named here, so that `removeNodeNetwork` (also run before a start, after a crashed
 * run) takes back exactly these.
 */
import { execFileSync, spawnSync } from 'node:child_process';

export const NODE_NETWORK = {
  /** Under 16 characters (a Linux interface name). */
  bridge: 'opkit-node0',
  /** The pods' subnet; the node's and API server's address is its first. Clear of kwok's 10.244.0.0/16. */
  cidr: '10.250.0.0/24',
  gateway: '10.250.0.1',
  /** The API server's Service range (testing/plane/apiserver.ts), routable off this machine. */
  serviceCidr: '10.0.0.0/24',
  /** Marks the iptables rules this file adds. */
  comment: 'opkit-real-node',
} as const;

function run(cmd: string, args: readonly string[]): void {
  execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Runs a command whose failure only means "there was nothing to take back". */
function tryRun(cmd: string, args: readonly string[]): boolean {
  return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
}

const COMMENT = ['-m', 'comment', '--comment', NODE_NETWORK.comment];
/** Nothing from the bridge is forwarded anywhere else. */
const LEAVING_BRIDGE = ['FORWARD', '-i', NODE_NETWORK.bridge, '!', '-o', NODE_NETWORK.bridge, ...COMMENT, '-j', 'DROP'];
/** A connection to a Service IP goes to the node's network, or nowhere. */
const SERVICE_OFF_NODE = [
  'POSTROUTING',
  '-m',
  'conntrack',
  '--ctorigdst',
  NODE_NETWORK.serviceCidr,
  '!',
  '-d',
  NODE_NETWORK.cidr,
  ...COMMENT,
  '-j',
  'DROP',
];
const RULES = [LEAVING_BRIDGE, SERVICE_OFF_NODE];

/** Makes the bridge, the blackhole route and the FORWARD rule (after taking back any left from before). */
export function createNodeNetwork(): void {
  removeNodeNetwork();
  const n = NODE_NETWORK;
  run('ip', ['link', 'add', n.bridge, 'type', 'bridge']);
  run('ip', ['addr', 'add', `${n.gateway}/${n.cidr.split('/')[1] ?? '24'}`, 'dev', n.bridge]);
  run('ip', ['link', 'set', n.bridge, 'up']);
  run('ip', ['route', 'add', 'blackhole', n.serviceCidr]);
  for (const rule of RULES) run('iptables', ['-t', 'mangle', '-I', ...rule]);
  // A Service's traffic from a pod to a pod on the same bridge must pass iptables (kube-proxy's
  // rules), and be forwarded back onto the bridge: forwarding on this bridge only.
  run('sysctl', ['-q', '-w', `net.ipv4.conf.${n.bridge}.forwarding=1`]);
  run('sysctl', ['-q', '-w', 'net.bridge.bridge-nf-call-iptables=1']);
}

/** Takes back what `createNodeNetwork` made; safe to run when none of it is there. */
export function removeNodeNetwork(): void {
  const n = NODE_NETWORK;
  for (const rule of RULES) while (tryRun('iptables', ['-t', 'mangle', '-D', ...rule]));
  tryRun('ip', ['route', 'del', 'blackhole', n.serviceCidr]);
  // Deleting the bridge detaches (but does not delete) the pods' veths; their namespaces go with
  // the containerd state that holds them.
  tryRun('ip', ['link', 'del', n.bridge]);
}

/**
 * The CNI configuration containerd hands pods: the bridge, addresses from its subnet, the Service
 * range via the node. The addresses given out are recorded in `ipamDir`, a directory of the node's
 * own that goes with it: in host-local's default place (/var/lib/cni/networks), shared by every
 * node this machine ever ran, the reservations of pods a stopped node never released added up
 * until the subnet had none left (253 of 253 after a day of runs), and no pod could start.
 */
export function cniConfig(ipamDir: string): object {
  const n = NODE_NETWORK;
  return {
    cniVersion: '1.0.0',
    name: 'opkit-node',
    plugins: [
      {
        type: 'bridge',
        bridge: n.bridge,
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          dataDir: ipamDir,
          ranges: [[{ subnet: n.cidr, gateway: n.gateway }]],
          // No default route: a pod reaches its own subnet (on-link) and Services, nothing else.
          routes: [{ dst: n.serviceCidr }],
        },
      },
    ],
  };
}
