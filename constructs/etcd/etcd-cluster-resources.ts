import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { backupCronJob } from '../core/backup-cron-job';
import { BACKUP_LIST_COMPONENT, backupListJob, backupListJobName } from '../core/backup-list';
import { reportBackupLine } from '../core/backup-records';
import { quantityMap, stepResources } from '../core/step-resources';
import { waitsFor } from '../contract/render';
import { PART_OF, selectorLabels, standardLabels } from '../core/labels';
import { NON_ROOT_UID, restrictedContainerSecurityContext, restrictedPodSecurityContext } from '../core/security';
import { ETCD_CLIENT_PORT, ETCD_METRICS_PORT, ETCD_PEER_PORT } from './addresses';
import type { EtcdClusterSpec } from './api';
import { EtcdRestore, snapshotSource } from './etcd-restore';
import { bootstrapTopology, type EtcdTopology, membersConfigMapName, quorum } from './topology';
import { membersConfigMapProps } from './members-config-map';
import { compareVersions } from './versions';
import {
  CLIENT_TLS_DIR,
  etcdctlTlsArgs,
  type EtcdTransport,
  etcdTransport,
  MEMBER_TLS_DIR,
  memberTlsArgs,
  memberTlsVolumes,
  etcdTlsSecrets,
  scheme,
} from './tls';

export { ETCD_CLIENT_PORT, ETCD_PEER_PORT, quorum };

export interface EtcdClusterResourcesProps {
  /** The EtcdCluster's name: the StatefulSet and headless Service take it. */
  readonly name: string;
  readonly namespace: string;
  /** The spec, with the API server's defaults applied. */
  readonly spec: EtcdClusterSpec;
  /** Controller owner reference to the EtcdCluster. @default none (a static render) */
  readonly owner?: k8s.OwnerReference;
  /** @default 'etcd-operator' */
  readonly managedBy?: string;
  /** The image with a shell that names and prunes snapshots. @default BACKUP_TOOLS_IMAGE */
  readonly backupToolsImage?: string;
  /**
   * Where the cluster's membership stands (the operator's step). @default a new cluster of
   * `spec.replicas` members at `spec.version`, bootstrapping together
   */
  readonly topology?: EtcdTopology;
  /**
   * Whether the members' volumes are still to be seeded from `spec.restore`: then the member
   * claims and a restore Job per member are rendered, and the StatefulSet waits for every Job to
   * complete. The operator says so until the status records the restore (condition `Restored`).
   * @default false
   */
  readonly restoring?: boolean;
  /**
   * Whether the backups already on the backup claim (kept from a cluster of this name deleted
   * before) are still to be listed into the status: then a Job lists them. The operator says so
   * until the status names the claim (`backupsListedFrom`). @default false
   */
  readonly listBackups?: boolean;
  /**
   * How the members talk (see tls.ts): with TLS, the members mount their certificates from the
   * Secrets the operator issues, and the backup Job its client certificate.
   * @default `spec.tls.enabled`, else TLS
   */
  readonly transport?: EtcdTransport;
}

/** The image of the backup Job's rotation step (a shell, date, ls, sort, rm): the etcd images have no shell. */
export const BACKUP_TOOLS_IMAGE = 'busybox:1.37.0';

/** The names of an etcd cluster's backup objects. */
export function etcdBackupNames(cluster: string): { claim: string; cronJob: string } {
  return { claim: `${cluster}-backups`, cronJob: `${cluster}-backup` };
}

/**
 * The backup Job's second step: name the snapshot the first step saved by its time, then delete
 * all but the newest `retention` snapshots. `dir` is where the backup volume is mounted.
 */
export function snapshotRotationScript(cluster: string, retention: number, dir = '/backups'): string {
  return [
    'set -eu',
    `cd ${dir}`,
    `f="${cluster}-$(date -u +%Y%m%dT%H%M%SZ).db"`,
    `mv ${SNAPSHOT_IN_PROGRESS} "$f"`,
    // Timestamps sort as text: newest first, and everything after the first `retention` goes.
    `ls -1 ${cluster}-*.db | sort -r | tail -n +${retention + 1} | while read -r old; do rm -f -- "$old"; done`,
    // The status lists it (see backup-records).
    reportBackupLine('"$f"', etcdBackupNames(cluster).claim),
  ].join('\n');
}

/** Where the snapshot step writes, in the backup volume, before it is named. */
export const SNAPSHOT_IN_PROGRESS = '.in-progress.db';

/** The labels of an etcd cluster's member pods. */
export function etcdSelectorLabels(name: string): Record<string, string> {
  return selectorLabels({ name: 'etcd', instance: name, component: 'member', managedBy: '' });
}

/**
 * Everything an etcd cluster runs on: a headless Service for stable peer names, a client
 * Service, a ConfigMap the members read their initial cluster from, a StatefulSet (one data PVC
 * per member), and a PodDisruptionBudget that never lets voluntary disruptions break quorum.
 *
 * Member i is `<name>-i`, reachable at `<name>-i.<name>.<namespace>.svc:2380`. A member's claim
 * is kept while it is a member and when the cluster is deleted; the claim of a member removed
 * by scaling down is deleted with its pod, since its data is a removed member's (the cluster has
 * it all) and would stop the ordinal from ever joining again.
 */
export class EtcdClusterResources extends Construct {
  readonly peerService: k8s.KubeService;
  readonly clientService: k8s.KubeService;
  readonly membersConfigMap: k8s.KubeConfigMap;
  readonly statefulSet: k8s.KubeStatefulSet;
  readonly podDisruptionBudget: k8s.KubePodDisruptionBudget;
  /** The snapshot CronJob, when `spec.backup` is set. */
  readonly backupCronJob?: k8s.KubeCronJob;
  /** Who may reach the members, unless `spec.network.policy` is false. */
  readonly networkPolicy?: k8s.KubeNetworkPolicy;

  constructor(scope: Construct, id: string, props: EtcdClusterResourcesProps) {
    super(scope, id);
    const { name, namespace, spec } = props;
    const labels = standardLabels({
      name: 'etcd',
      instance: name,
      component: 'member',
      managedBy: props.managedBy ?? 'etcd-operator',
    });
    const ownerReferences = props.owner ? [props.owner] : undefined;
    const transport = props.transport ?? etcdTransport({ spec });
    const parts: EtcdParts = {
      props,
      labels,
      selector: etcdSelectorLabels(name),
      meta: (objectName) => ({ name: objectName, namespace, labels, ownerReferences }),
      transport,
      topology: props.topology ?? bootstrapTopology(name, namespace, spec.replicas, spec.version, transport),
    };
    const port = (portName: string, n: number) => ({
      name: portName,
      port: n,
      targetPort: k8s.IntOrString.fromString(portName),
      protocol: 'TCP',
    });

    this.peerService = new k8s.KubeService(this, 'PeerService', {
      metadata: parts.meta(name),
      spec: {
        clusterIp: 'None',
        // Members must resolve each other before they are ready, or the cluster never forms.
        publishNotReadyAddresses: true,
        selector: parts.selector,
        ports: [port('client', ETCD_CLIENT_PORT), port('peer', ETCD_PEER_PORT)],
      },
    });
    this.clientService = new k8s.KubeService(this, 'ClientService', {
      metadata: parts.meta(`${name}-client`),
      spec: { type: 'ClusterIP', selector: parts.selector, ports: [port('client', ETCD_CLIENT_PORT)] },
    });
    this.membersConfigMap = new k8s.KubeConfigMap(
      this,
      'Members',
      membersConfigMapProps(parts.meta(membersConfigMapName(name)), parts.topology),
    );
    this.statefulSet = this.addStatefulSet(parts);
    if (spec.restore && props.restoring) this.addRestore(parts, spec.restore);
    this.podDisruptionBudget = new k8s.KubePodDisruptionBudget(this, 'Pdb', {
      metadata: parts.meta(name),
      spec: {
        minAvailable: k8s.IntOrString.fromNumber(quorum(parts.topology.replicas)),
        selector: { matchLabels: parts.selector },
      },
    });
    if (spec.network?.policy !== false) this.networkPolicy = this.addNetworkPolicy(parts);
    if (spec.backup) {
      this.backupCronJob = this.addBackups(parts, spec.backup);
      if (props.listBackups) this.addBackupList(parts);
    }
  }

  /** The members: one pod and one data claim each, started together, rolled one at a time. */
  private addStatefulSet(parts: EtcdParts): k8s.KubeStatefulSet {
    const { props, labels, selector, meta, topology } = parts;
    const { name, spec } = props;
    const member = etcdMemberContainer(parts);
    return new k8s.KubeStatefulSet(this, 'StatefulSet', {
      metadata: meta(name),
      spec: {
        serviceName: name,
        replicas: topology.replicas,
        // All members start together: etcd's bootstrap waits for the initial cluster.
        podManagementPolicy: 'Parallel',
        selector: { matchLabels: selector },
        // A new version rolls one member at a time: the operator lowers the partition only when
        // every member is healthy.
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: topology.partition } },
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Delete' },
        template: {
          metadata: { labels },
          spec: {
            automountServiceAccountToken: false,
            securityContext: restrictedPodSecurityContext(NON_ROOT_UID),
            ...memberPlacement(selector),
            containers: [member],
            volumes: parts.transport === 'TLS' ? memberTlsVolumes(name) : undefined,
          },
        },
        volumeClaimTemplates: [{ metadata: { name: 'data', labels: selector }, spec: memberClaimSpec(spec) }],
      },
    });
  }

  /** The members' claims seeded from a snapshot before the StatefulSet may start any member. */
  private addRestore(parts: EtcdParts, restore: NonNullable<EtcdClusterSpec['restore']>): void {
    const { props } = parts;
    const jobs = new EtcdRestore(this, 'Restore', {
      name: props.name,
      namespace: props.namespace,
      spec: props.spec,
      source: snapshotSource(restore),
      topology: parts.topology,
      owner: props.owner,
      managedBy: props.managedBy ?? 'etcd-operator',
      toolsImage: props.backupToolsImage ?? BACKUP_TOOLS_IMAGE,
      claimSpec: memberClaimSpec(props.spec),
      claimLabels: parts.selector,
    }).jobs;
    // No member starts before every member's volume holds the snapshot.
    waitsFor(this.statefulSet, ...jobs);
  }

  /** Snapshots on a schedule into a claim of their own, the newest `retention` kept. */
  private addBackups(
    { props, meta, topology, transport }: EtcdParts,
    backup: NonNullable<EtcdClusterSpec['backup']>,
  ): k8s.KubeCronJob {
    const { name, namespace } = props;
    const names = etcdBackupNames(name);
    const backupLabels = standardLabels({
      name: 'etcd',
      instance: name,
      component: 'backup',
      managedBy: props.managedBy ?? 'etcd-operator',
    });
    // Snapshots are user data: the claim has no owner, so deleting the cluster keeps it.
    new k8s.KubePersistentVolumeClaim(this, 'BackupClaim', {
      metadata: { name: names.claim, namespace, labels: backupLabels },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: backup.storageClassName,
        resources: { requests: { storage: k8s.Quantity.fromString(String(backup.storage)) } },
      },
    });
    const volumeMounts = [{ name: 'backups', mountPath: '/backups' }];
    const tls = transport === 'TLS';
    const small = stepResources('50m', '64Mi', '256Mi');
    return backupCronJob(this, 'Backup', {
      metadata: { ...meta(names.cronJob), labels: backupLabels },
      labels: backupLabels,
      schedule: backup.schedule,
      uid: NON_ROOT_UID,
      // The etcd image has etcdctl but no shell; the tools image has a shell but no etcdctl.
      initContainers: [
        snapshotStep({ name, namespace, version: topology.version, transport, volumeMounts, resources: small }),
      ],
      containers: [
        {
          name: 'rotate',
          image: props.backupToolsImage ?? BACKUP_TOOLS_IMAGE,
          command: ['sh', '-c', snapshotRotationScript(name, backup.retention)],
          terminationMessagePolicy: 'FallbackToLogsOnError',
          resources: small,
          securityContext: restrictedContainerSecurityContext(),
          volumeMounts,
        },
      ],
      volumes: [
        { name: 'backups', persistentVolumeClaim: { claimName: names.claim } },
        ...(tls
          ? [{ name: 'client-tls', secret: { secretName: etcdTlsSecrets(name).client, defaultMode: 0o440 } }]
          : []),
      ],
    });
  }

  /**
   * Who may reach the members: the peer port the cluster's members only; the client port the
   * clients the spec names (else the namespace's pods), the members, the backup Jobs and the kit's
   * operators — their pods in namespaces labelled as the kit labels its operators' (a label only
   * those who may change namespaces can set); probes and metrics from anywhere.
   */
  private addNetworkPolicy({ props, meta, selector }: EtcdParts): k8s.KubeNetworkPolicy {
    const { name, spec } = props;
    const tcp = (port: number) => [{ port: k8s.IntOrString.fromNumber(port), protocol: 'TCP' }];
    const members = { podSelector: { matchLabels: selector } };
    const backups = {
      podSelector: {
        matchLabels: selectorLabels({ name: 'etcd', instance: name, component: 'backup', managedBy: '' }),
      },
    };
    const kitOperators = { 'app.kubernetes.io/part-of': PART_OF, 'app.kubernetes.io/component': 'controller' };
    const operator = { namespaceSelector: { matchLabels: kitOperators }, podSelector: { matchLabels: kitOperators } };
    const clients = spec.network?.clients ?? [{ podSelector: {} }];
    return new k8s.KubeNetworkPolicy(this, 'NetworkPolicy', {
      metadata: meta(name),
      spec: {
        podSelector: { matchLabels: selector },
        policyTypes: ['Ingress'],
        ingress: [
          { from: [members], ports: tcp(ETCD_PEER_PORT) },
          { from: [...(clients as k8s.NetworkPolicyPeer[]), members, backups, operator], ports: tcp(ETCD_CLIENT_PORT) },
          { ports: tcp(ETCD_METRICS_PORT) },
        ],
      },
    });
  }

  /** The Job listing the snapshots already on the backup claim (see backup-list). */
  private addBackupList({ props, meta }: EtcdParts): void {
    const { name } = props;
    const labels = standardLabels({
      name: 'etcd',
      instance: name,
      component: BACKUP_LIST_COMPONENT,
      managedBy: props.managedBy ?? 'etcd-operator',
    });
    backupListJob(this, 'ListBackups', {
      metadata: { ...meta(backupListJobName(name)), labels },
      labels,
      claim: etcdBackupNames(name).claim,
      // The snapshots as the rotation names them.
      patterns: [`${name}-*.db`],
      image: props.backupToolsImage ?? BACKUP_TOOLS_IMAGE,
      uid: NON_ROOT_UID,
    });
  }
}

/** The backup Job's first step: etcdctl saves a snapshot through the client Service (with the client certificate under TLS). */
function snapshotStep(p: {
  name: string;
  namespace: string;
  version: string;
  transport: EtcdTransport;
  volumeMounts: k8s.VolumeMount[];
  resources: k8s.ResourceRequirements;
}): k8s.Container {
  const tls = p.transport === 'TLS';
  return {
    name: 'snapshot',
    image: `quay.io/coreos/etcd:v${p.version}`,
    command: [
      'etcdctl',
      `--endpoints=${scheme(p.transport)}://${p.name}-client.${p.namespace}.svc:${ETCD_CLIENT_PORT}`,
      ...(tls ? etcdctlTlsArgs() : []),
      '--dial-timeout=10s',
      'snapshot',
      'save',
      `/backups/${SNAPSHOT_IN_PROGRESS}`,
    ],
    resources: p.resources,
    securityContext: restrictedContainerSecurityContext(),
    volumeMounts: tls
      ? [...p.volumeMounts, { name: 'client-tls', mountPath: CLIENT_TLS_DIR, readOnly: true }]
      : p.volumeMounts,
  };
}

/** Each member's data claim: the StatefulSet's claim template, and a restore's claims before it. */
function memberClaimSpec(spec: EtcdClusterSpec): k8s.PersistentVolumeClaimSpec {
  return {
    accessModes: ['ReadWriteOnce'],
    storageClassName: spec.storageClassName,
    resources: { requests: { storage: k8s.Quantity.fromString(String(spec.storage)) } },
  };
}

/** What the parts of one cluster's resources share. */
interface EtcdParts {
  readonly props: EtcdClusterResourcesProps;
  readonly labels: Record<string, string>;
  readonly selector: Record<string, string>;
  readonly meta: (objectName: string) => {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    ownerReferences: k8s.OwnerReference[] | undefined;
  };
  readonly topology: EtcdTopology;
  readonly transport: EtcdTransport;
}

/** etcd's /livez and /readyz (since 3.5.11). */
const LIVEZ_SINCE = '3.5.11';

/**
 * A member's probes, on the metrics port. Liveness asks whether the member's own process serves,
 * never whether the cluster has quorum: a liveness probe that failed with the quorum would restart
 * every member during an outage, turning a lost quorum into a restart storm. So `/livez`, or before
 * it the member's serializable health (no consensus read). Readiness is etcd's own `/readyz`
 * (before it, `/health`): a member cut off from the quorum takes no client traffic.
 */
function memberProbes(version: string) {
  const livez = compareVersions(version, LIVEZ_SINCE) >= 0;
  const port = k8s.IntOrString.fromString('metrics');
  return {
    livenessProbe: {
      httpGet: { path: livez ? '/livez' : '/health?serializable=true', port },
      initialDelaySeconds: 15,
      periodSeconds: 10,
      failureThreshold: 6,
    },
    // From the start and every 2 s: the operator restarts members one at a time, each once the one
    // before is ready, so each second a ready member waits for its probe is a second per member.
    readinessProbe: {
      httpGet: { path: livez ? '/readyz' : '/health', port },
      periodSeconds: 2,
    },
  };
}

/**
 * Where members go: preferably each on a node of its own (a node lost takes one member, not the
 * quorum), and spread over zones where the nodes have them. Preferences, not requirements: a
 * cluster of fewer nodes than members still runs.
 */
function memberPlacement(selector: Record<string, string>) {
  return {
    affinity: {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 100,
            podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: selector } },
          },
        ],
      },
    },
    topologySpreadConstraints: [
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: selector },
      },
    ],
  };
}

/** The etcd container of a member pod: its flags, its initial cluster from the ConfigMap, probes and resources. */
function etcdMemberContainer({ props, topology, transport }: EtcdParts) {
  const { name, namespace, spec } = props;
  const peerDomain = `${name}.${namespace}.svc`;
  const url = scheme(transport);
  const member = {
    name: 'etcd',
    image: `quay.io/coreos/etcd:v${topology.version}`,
    command: ['etcd'],
    args: [
      '--name=$(POD_NAME)',
      '--data-dir=/var/lib/etcd/data',
      `--listen-client-urls=${url}://0.0.0.0:${ETCD_CLIENT_PORT}`,
      `--advertise-client-urls=${url}://$(POD_NAME).${peerDomain}:${ETCD_CLIENT_PORT}`,
      `--listen-peer-urls=${url}://0.0.0.0:${ETCD_PEER_PORT}`,
      `--initial-advertise-peer-urls=${url}://$(POD_NAME).${peerDomain}:${ETCD_PEER_PORT}`,
      `--initial-cluster-token=${name}.${namespace}`,
      ...(transport === 'TLS' ? memberTlsArgs(name, topology.version) : []),
      `--listen-metrics-urls=http://0.0.0.0:${ETCD_METRICS_PORT}`,
      // Old revisions compacted away on a schedule, so the database does not grow without bound.
      '--auto-compaction-mode=periodic',
      `--auto-compaction-retention=${spec.autoCompactionRetention}`,
    ],
    env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
    envFrom: [{ configMapRef: { name: membersConfigMapName(name) } }],
    ports: [
      { name: 'client', containerPort: ETCD_CLIENT_PORT, protocol: 'TCP' },
      { name: 'peer', containerPort: ETCD_PEER_PORT, protocol: 'TCP' },
      { name: 'metrics', containerPort: ETCD_METRICS_PORT, protocol: 'TCP' },
    ],
    ...memberProbes(topology.version),
    resources: {
      requests: quantityMap(spec.resources?.requests) ?? {
        cpu: k8s.Quantity.fromString('100m'),
        memory: k8s.Quantity.fromString('128Mi'),
      },
      limits: quantityMap(spec.resources?.limits),
    },
    securityContext: restrictedContainerSecurityContext(),
    volumeMounts: [
      { name: 'data', mountPath: '/var/lib/etcd' },
      ...(transport === 'TLS'
        ? [
            { name: 'peer-tls', mountPath: `${MEMBER_TLS_DIR}/peer`, readOnly: true },
            { name: 'server-tls', mountPath: `${MEMBER_TLS_DIR}/server`, readOnly: true },
          ]
        : []),
    ],
  };
  return member;
}
