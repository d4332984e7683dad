/**
 * Simulated nodes: kube-scheduler places pods, kwok plays the kubelets (and a volume
 * provisioner), each as its own user with its own rights.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { HARNESS_KWOK_STAGES, KWOK_STAGES, KWOK_STORAGE_CLASS } from '../kwok-stages';
import { type ControlPlaneBinaries, HARNESS_DIR } from './binaries';
import { freePort } from '../free-port';
import { componentKubeconfig, componentServingArgs } from './pki';
import { startProcess, waitFor, waitForHealthz } from './process';
import { conditionTrue, listAt, parseJson } from '../../constructs/contract/json';

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

/** The running plane the nodes join: its API server, admin kubeconfig, PKI, logs and processes. */
export interface PlaneForNodes {
  readonly server: string;
  readonly kubeconfig: string;
  readonly certs: string;
  readonly logs: string;
  readonly procs: ChildProcess[];
}

/**
 * Starts kube-scheduler and kwok, creates the fake nodes kwok manages and kwok's default
 * StorageClass, and waits until the nodes are Ready. Each runs as its own user with its own
 * rights (not the admin's).
 */
export async function startNodes(
  bins: { readonly scheduler: string; readonly kwok: NonNullable<ControlPlaneBinaries['kwok']> },
  tokens: { readonly scheduler: string; readonly kwok: string },
  plane: PlaneForNodes,
): Promise<void> {
  const schedulerPort = await startScheduler(bins.scheduler, tokens.scheduler, plane);
  const kubectl = adminKubectl(plane.kubeconfig);
  kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify(nodeObjects()));
  // kwok's default StorageClass: claims without a class get a volume provisioned and bound.
  kubectl(['apply', '--server-side', '-f', path.join(bins.kwok.stages, KWOK_STORAGE_CLASS)]);
  kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify(expandableStorageClass()));
  startKwok(bins.kwok, tokens.kwok, plane);
  await waitForHealthz('kube-scheduler', schedulerPort, plane);
  await waitFor(`${NODE_COUNT} Ready nodes`, () => readyNodes(kubectl) === NODE_COUNT, plane.procs, 60_000, plane.logs);
}

function adminKubectl(kubeconfig: string): (args: string[], input?: string) => string {
  return (args, input) =>
    execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], {
      input,
      stdio: ['pipe', 'pipe', 'pipe'],
      encoding: 'utf8',
    });
}

/** Starts kube-scheduler as its own user; returns its health port. */
export async function startScheduler(bin: string, token: string, plane: PlaneForNodes): Promise<number> {
  const port = await freePort();
  const kubeconfig = componentKubeconfig(plane.certs, plane.server, 'scheduler', token);
  const args = [...componentServingArgs(kubeconfig, port), '--v=1'];
  plane.procs.push(startProcess(bin, args, path.join(plane.logs, 'kube-scheduler.log')));
  return port;
}

/**
 * A StorageClass whose claims may grow (kwok-claim-provision-stage.yaml provisions them,
 * kwok-volume-expansion-stages.yaml completes a resize as a CSI driver's resizer would); kwok's
 * default class does not allow it.
 */
export const EXPANDABLE_STORAGE_CLASS = 'kwok-volume-expandable';

/** A claim annotation that holds its resize (kwok-volume-expansion-stages.yaml) until it is taken off, as a slow resizer would. */
export const RESIZE_HELD_ANNOTATION = 'testing.cdk8s-operator-kit/resize-held';

function expandableStorageClass(): object {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: EXPANDABLE_STORAGE_CLASS },
    provisioner: 'kwok.x-k8s.io/volume',
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
    allowVolumeExpansion: true,
  };
}

/** kwok's role and binding, and the nodes it manages. */
function nodeObjects(): object {
  return {
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
  };
}

/** Starts kwok as its own user, with its stages and the harness's failure stages. */
function startKwok(kwok: NonNullable<ControlPlaneBinaries['kwok']>, token: string, plane: PlaneForNodes): void {
  const kubeconfig = componentKubeconfig(plane.certs, plane.server, 'kwok', token);
  const args = [
    `--kubeconfig=${kubeconfig}`,
    '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
    '--node-lease-duration-seconds=40',
    '--cidr=10.244.0.0/16',
    '--node-ip=10.240.0.1',
    ...KWOK_STAGES.flatMap((stage) => ['-c', path.join(kwok.stages, stage)]),
    ...HARNESS_KWOK_STAGES.flatMap((stage) => ['-c', path.join(HARNESS_DIR, stage)]),
  ];
  plane.procs.push(startProcess(kwok.bin, args, path.join(plane.logs, 'kwok.log')));
}

function readyNodes(kubectl: (args: string[]) => string): number {
  return listAt(parseJson(kubectl(['get', 'nodes', '-o', 'json'])), 'items').filter((n) => conditionTrue(n, 'Ready'))
    .length;
}
