import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { standardLabels } from '../core/labels';
import { stepResources } from '../core/step-resources';
import { retriedOnDisruption } from '../core/pods';
import { NON_ROOT_UID, restrictedContainerSecurityContext, restrictedPodSecurityContext } from '../core/security';
import { memberName } from './addresses';
import type { EtcdClusterSpec } from './api';
import type { EtcdTopology } from './topology';

/** Where a restore reads its snapshot: a claim of the cluster's namespace and a file in it. */
export interface SnapshotSource {
  readonly claim: string;
  readonly path: string;
}

/**
 * The snapshot `spec.restore` names: a backup by name lives in the claim of the cluster that
 * took it (`<cluster>-<time>.db` in `<cluster>-backups`), or a claim and path given as they are.
 */
export function snapshotSource(restore: NonNullable<EtcdClusterSpec['restore']>): SnapshotSource {
  if (restore.backup) {
    const cluster = restore.backup.replace(/-\d{8}T\d{6}Z\.db$/, '');
    return { claim: `${cluster}-backups`, path: restore.backup };
  }
  return { claim: restore.claim ?? '', path: restore.path ?? '' };
}

/** The restore Job of member `ordinal`. */
export function restoreJobName(cluster: string, ordinal: number): string {
  return `${cluster}-restore-${ordinal}`;
}

export interface EtcdRestoreProps {
  readonly name: string;
  readonly namespace: string;
  readonly spec: EtcdClusterSpec;
  readonly source: SnapshotSource;
  /** The members the cluster starts with: their names and peer URLs go into each restored member. */
  readonly topology: EtcdTopology;
  readonly owner?: k8s.OwnerReference;
  readonly managedBy: string;
  /** The image with a shell (checks before, the move after). */
  readonly toolsImage: string;
  /** The member claim's spec, as the StatefulSet's claim template has it. */
  readonly claimSpec: k8s.PersistentVolumeClaimSpec;
  /** The labels of the claim template. */
  readonly claimLabels: Record<string, string>;
}

/**
 * The seeding of a new cluster from a snapshot, before any member starts: each member's claim
 * (named as the StatefulSet's claim template names it, so the StatefulSet takes it up) and a Job
 * per member that restores the snapshot into it with `etcdutl snapshot restore` — under the
 * member's own name, peer URL and the cluster's token, so the members form one cluster.
 *
 * Each Job checks first that the snapshot is there and that the volume holds no etcd data (never
 * restoring over a member's data), restores into a directory of its own, and only then moves it
 * where the member reads it: a restore that fails (a snapshot failing its integrity check) leaves
 * no data directory behind. It runs once (no retries: a corrupt snapshot stays corrupt; a pod evicted or drained is made again, `retriedOnDisruption`), and what
 * it printed is its termination message, which the status reports.
 */
export class EtcdRestore extends Construct {
  readonly jobs: k8s.KubeJob[] = [];

  constructor(scope: Construct, id: string, props: EtcdRestoreProps) {
    super(scope, id);
    const { name, namespace, source, topology } = props;
    const labels = standardLabels({ name: 'etcd', instance: name, component: 'restore', managedBy: props.managedBy });
    const ownerReferences = props.owner ? [props.owner] : undefined;
    const peers = new Map(topology.initialCluster.split(',').map((entry) => entry.split('=') as [string, string]));
    for (let ordinal = 0; ordinal < topology.replicas; ordinal++) {
      const member = memberName(name, ordinal);
      const claim = `data-${member}`;
      // Member data outlives the cluster, as the claim template's claims do: no owner.
      new k8s.KubePersistentVolumeClaim(this, `Claim${ordinal}`, {
        metadata: { name: claim, namespace, labels: props.claimLabels },
        spec: props.claimSpec,
      });
      const restoreArgs = [
        'snapshot',
        'restore',
        `/snapshot/${source.path}`,
        `--data-dir=${RESTORING_DIR}`,
        `--name=${member}`,
        `--initial-cluster=${topology.initialCluster}`,
        `--initial-cluster-token=${name}.${namespace}`,
        `--initial-advertise-peer-urls=${peers.get(member) ?? ''}`,
      ];
      this.jobs.push(
        new k8s.KubeJob(this, `Job${ordinal}`, {
          metadata: { name: restoreJobName(name, ordinal), namespace, labels, ownerReferences },
          spec: {
            backoffLimit: 0,
            podFailurePolicy: retriedOnDisruption(),
            template: {
              metadata: { labels },
              spec: {
                restartPolicy: 'Never',
                automountServiceAccountToken: false,
                securityContext: restrictedPodSecurityContext(NON_ROOT_UID),
                initContainers: [
                  step('check', props.toolsImage, ['sh', '-c', checkScript(member, claim, source)]),
                  step('restore', `quay.io/coreos/etcd:v${topology.version}`, ['etcdutl', ...restoreArgs]),
                ],
                containers: [step('commit', props.toolsImage, ['mv', RESTORING_DIR, DATA_DIR])],
                volumes: [
                  { name: 'data', persistentVolumeClaim: { claimName: claim } },
                  { name: 'snapshot', persistentVolumeClaim: { claimName: source.claim, readOnly: true } },
                ],
              },
            },
          },
        }),
      );
    }
  }
}

/** Where the member reads its data (`--data-dir`), on its claim mounted at /var/lib/etcd. */
const DATA_DIR = '/var/lib/etcd/data';
/** Where the restore writes before it is complete. */
const RESTORING_DIR = '/var/lib/etcd/.restoring';

/** Refuses a missing snapshot and a volume with data; clears what a failed attempt left. */
function checkScript(member: string, claim: string, source: SnapshotSource): string {
  return [
    'set -eu',
    `if [ ! -f '/snapshot/${source.path}' ]; then echo "snapshot ${source.path} not found in PVC ${source.claim}" >&2; exit 1; fi`,
    `if [ -e ${DATA_DIR} ]; then echo "PVC ${claim} of member ${member} already holds etcd data: not restoring over it" >&2; exit 1; fi`,
    `rm -rf ${RESTORING_DIR}`,
  ].join('\n');
}

/** One step of a restore Job: restricted, small, its log tail the termination message when it fails. */
function step(name: string, image: string, command: string[]): k8s.Container {
  return {
    name,
    image,
    command,
    terminationMessagePolicy: 'FallbackToLogsOnError',
    resources: stepResources('50m', '64Mi', '512Mi'),
    securityContext: restrictedContainerSecurityContext(),
    volumeMounts: [
      { name: 'data', mountPath: '/var/lib/etcd' },
      { name: 'snapshot', mountPath: '/snapshot', readOnly: true },
    ],
  };
}
