/**
 * A NetworkPolicy enforcer for the real node, when the plane is given one: kube-router's network
 * policy controller alone (built from its Go module by testing/build-kube-router.sh), beside the
 * node as a CNI's agent would run on it. It reads Pods, Namespaces and NetworkPolicies from the API
 * server and turns them into iptables rules and ipsets for the pods on the node's bridge, so a
 * connection a policy does not allow is rejected before it reaches the pod, as on a cluster whose
 * network enforces policies. It serves nothing (health and metrics ports off) and calls only the
 * API server.
 *
 * Every rule and set it makes is its own (KUBE-ROUTER-*, KUBE-POD-FW-*, KUBE-NWPLCY-*, KUBE-SRC-*,
 * KUBE-DST-*): its own `--cleanup-config` takes them back after it stops, and before it starts, in
 * case a crashed run left some.
 */
import { type ChildProcess, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { runBuildScript } from '../build-script';
import { startProcess, waitFor } from '../plane/process';
import { NODE_NETWORK } from './network';

/** kube-router's binary, built from its Go module by testing/build-kube-router.sh or found in its cache (minutes, cold). */
export function networkPolicyEnforcerBinary(verbose: boolean): string {
  return runBuildScript('build-kube-router.sh', verbose);
}

/** Why the enforcer cannot run on this machine (a command it needs is missing), or undefined. */
export function networkPolicyEnforcerUnavailable(): string | undefined {
  for (const tool of ['ipset', 'iptables-save', 'iptables-restore'])
    if (spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0)
      return `the NetworkPolicy enforcer needs ${tool} (apt-get install ipset iptables)`;
  return undefined;
}

/** Takes back every rule and set kube-router made; safe to run when there are none. */
export function removeNetworkPolicyRules(kubeRouter: string): void {
  spawnSync(kubeRouter, ['--cleanup-config'], { stdio: 'ignore' });
}

/** Whether kube-router has made its top chains: it enforces from then on. */
function enforcing(): boolean {
  return spawnSync('iptables', ['-S', 'KUBE-ROUTER-FORWARD'], { stdio: 'ignore' }).status === 0;
}

/** Starts the enforcer for node `nodeName`; resolves once its rules are in place. */
export async function startNetworkPolicyEnforcer(
  kubeRouter: string,
  nodeName: string,
  plane: {
    readonly adminKubeconfig: string;
    readonly procs: ChildProcess[];
    readonly logs: string;
    readonly cleanups: (() => void)[];
  },
): Promise<void> {
  removeNetworkPolicyRules(kubeRouter);
  plane.cleanups.push(() => {
    removeNetworkPolicyRules(kubeRouter);
  });
  plane.procs.push(
    startProcess(
      kubeRouter,
      [
        `--kubeconfig=${plane.adminKubeconfig}`,
        `--hostname-override=${nodeName}`,
        '--run-firewall=true',
        '--run-router=false',
        '--run-service-proxy=false',
        `--service-cluster-ip-range=${NODE_NETWORK.serviceCidr}`,
        '--health-port=0',
        '--metrics-port=0',
        '--v=1',
      ],
      path.join(plane.logs, 'kube-router.log'),
    ),
  );
  await waitFor('NetworkPolicy enforcer (kube-router) in place', enforcing, plane.procs, 60_000, plane.logs);
}
