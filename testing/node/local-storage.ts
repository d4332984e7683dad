/**
 * The real node's default StorageClass with dynamic provisioning, as kind ships it: rancher's
 * local-path-provisioner, run beside the node (it reads and writes the API server only), makes a
 * directory on the node for each claim of the class through a short helper pod, and removes it when
 * the volume is released. The helper pod runs busybox, as kind's does: the node's own image of
 * Debian's busybox-static (images.ts), which the node loads here for any pod to use. Volumes live under the node's work directory, so
 * stopping the plane takes them back with it.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startProcess, waitFor } from '../plane/process';
import { BUSYBOX_IMAGE, busyboxImageArchive } from './images';

export const LOCAL_STORAGE = {
  /** kind's name for its default class. */
  storageClass: 'standard',
  provisioner: 'rancher.io/local-path',
  namespace: 'local-path-storage',
  configMap: 'local-path-config',
  serviceAccount: 'local-path-provisioner-service-account',
  /** As kind's: busybox, here the node's own (images.ts). */
  helperImage: BUSYBOX_IMAGE.name,
} as const;

/** What the node's helper pods run: the volume made writable by any pod user, and removed on release. */
const SETUP = '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n';
const TEARDOWN = '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n';

/** The objects the provisioner needs in the cluster: its namespace, the helper pods' account, their scripts, the default class. */
export function localStorageObjects(volumesDir: string): object[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: LOCAL_STORAGE.namespace } },
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: LOCAL_STORAGE.serviceAccount, namespace: LOCAL_STORAGE.namespace },
      automountServiceAccountToken: false,
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: LOCAL_STORAGE.configMap, namespace: LOCAL_STORAGE.namespace },
      data: {
        'config.json': provisionerConfig(volumesDir),
        setup: SETUP,
        teardown: TEARDOWN,
        'helperPod.yaml': helperPod(),
      },
    },
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: {
        name: LOCAL_STORAGE.storageClass,
        annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
      },
      provisioner: LOCAL_STORAGE.provisioner,
      // A claim is provisioned on the node its first pod is scheduled to, as kind's class does.
      volumeBindingMode: 'WaitForFirstConsumer',
      reclaimPolicy: 'Delete',
    },
  ];
}

/** The provisioner's config.json: every node's volumes under `volumesDir`. */
function provisionerConfig(volumesDir: string): string {
  return JSON.stringify({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [volumesDir] }] });
}

/** The helper pod's template (the provisioner adds the volume, the command and the node). */
function helperPod(): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'helper-pod' },
    spec: {
      automountServiceAccountToken: false,
      containers: [{ name: 'helper-pod', image: LOCAL_STORAGE.helperImage, imagePullPolicy: 'IfNotPresent' }],
    },
  });
}

/**
 * Loads the helper image into the node, applies the objects and starts the provisioner; resolves
 * once it runs. `loadImage` imports an OCI archive into the node.
 */
export async function startLocalStorage(
  provisioner: string,
  dir: string,
  loadImage: (archive: string) => void,
  plane: { readonly adminKubeconfig: string; readonly procs: ChildProcess[]; readonly logs: string },
): Promise<void> {
  // The helper image (busybox, run as root: it makes and removes directories on the node).
  loadImage(busyboxImageArchive(path.join(dir, 'busybox.oci.tar')));
  const volumes = path.join(dir, 'local-path');
  fs.mkdirSync(volumes, { recursive: true });
  execFileSync('kubectl', ['--kubeconfig', plane.adminKubeconfig, 'apply', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: localStorageObjects(volumes) }),
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  const configFile = path.join(dir, 'local-path-config.json');
  fs.writeFileSync(configFile, provisionerConfig(volumes));
  const proc = startProcess(
    provisioner,
    [
      'start',
      `--kubeconfig=${plane.adminKubeconfig}`,
      `--namespace=${LOCAL_STORAGE.namespace}`,
      `--configmap-name=${LOCAL_STORAGE.configMap}`,
      `--config=${configFile}`,
      `--helper-image=${LOCAL_STORAGE.helperImage}`,
      `--service-account-name=${LOCAL_STORAGE.serviceAccount}`,
      `--provisioner-name=${LOCAL_STORAGE.provisioner}`,
    ],
    path.join(plane.logs, 'local-path-provisioner.log'),
  );
  plane.procs.push(proc);
  // It has no health endpoint: running once it has logged its start.
  const log = path.join(plane.logs, 'local-path-provisioner.log');
  await waitFor(
    'local-path-provisioner started',
    () =>
      fs.existsSync(log) && /Provisioner started|Starting provisioner controller/.test(fs.readFileSync(log, 'utf8')),
    plane.procs,
    60_000,
    plane.logs,
  );
}
