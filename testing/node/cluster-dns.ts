/**
 * The real node's cluster DNS, as every cluster has one: CoreDNS (testing/node/coredns.go, only the
 * plugins named there) on the node's bridge address, port 53, answering `cluster.local` — Services,
 * headless Services' pods by hostname and subdomain (a StatefulSet's members), reverse lookups of
 * the Service and pod ranges — from the API server. It has no plugin that forwards: a name outside
 * the cluster is refused at once, never looked up off this machine. The kubelet points every pod
 * with the ClusterFirst policy at it (`clusterDNS`).
 */
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort } from '../free-port';
import { probe, startProcess, waitFor } from '../plane/process';
import { NODE_NETWORK } from './network';

/** Where pods send their DNS queries: the node's own address on its bridge. */
export const CLUSTER_DNS = { address: NODE_NETWORK.gateway, domain: 'cluster.local' } as const;

/** The Corefile: one server, authoritative for the cluster's zones, reading the API server. */
export function corefile(options: { kubeconfig: string; readyPort: number }): string {
  return `${CLUSTER_DNS.domain}:53 in-addr.arpa:53 ip6.arpa:53 {
    bind ${CLUSTER_DNS.address}
    ready 127.0.0.1:${options.readyPort}
    errors
    kubernetes ${CLUSTER_DNS.domain} in-addr.arpa ip6.arpa {
        kubeconfig ${options.kubeconfig}
        pods insecure
        ttl 5
    }
    cache 5
}
`;
}

/** Starts CoreDNS for the node in `dir`; resolves once it has synced with the API server (its `ready` plugin). */
export async function startClusterDns(
  coredns: string,
  dir: string,
  plane: { readonly adminKubeconfig: string; readonly procs: ChildProcess[]; readonly logs: string },
): Promise<ChildProcess> {
  const readyPort = await freePort();
  const conf = path.join(dir, 'Corefile');
  fs.writeFileSync(conf, corefile({ kubeconfig: plane.adminKubeconfig, readyPort }));
  const proc = startProcess(coredns, ['-conf', conf], path.join(plane.logs, 'coredns.log'));
  plane.procs.push(proc);
  await waitFor(
    'cluster DNS ready',
    async () => (await probe(`http://127.0.0.1:${readyPort}/ready`, Buffer.alloc(0))) === 200,
    plane.procs,
    60_000,
    plane.logs,
  );
  return proc;
}
