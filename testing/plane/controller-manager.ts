/** kube-controller-manager: garbage collection and the workload controllers, fast and unthrottled. */
import type { ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { freePort } from '../free-port';
import { componentKubeconfig, componentServingArgs } from './pki';
import { startProcess, waitForHealthz } from './process';

/** Starts it as its own user and waits until it is healthy. */
export async function startControllerManager(
  bin: string,
  server: string,
  token: string,
  plane: { readonly certs: string; readonly logs: string; readonly procs: ChildProcess[] },
): Promise<void> {
  const port = await freePort();
  const kubeconfig = componentKubeconfig(plane.certs, server, 'kcm', token);
  const args = [
    ...componentServingArgs(kubeconfig, port),
    `--service-account-private-key-file=${path.join(plane.certs, 'sa.key')}`,
    `--root-ca-file=${path.join(plane.certs, 'ca.crt')}`,
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
  ];
  plane.procs.push(startProcess(bin, args, path.join(plane.logs, 'kube-controller-manager.log')));
  await waitForHealthz('kube-controller-manager', port, plane);
}
