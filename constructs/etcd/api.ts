import { type CustomResource, CustomResourceKind, NAME_FIELD } from '../core/kind';
import {
  CRON_MAX_LENGTH,
  CRON_SCHEDULE_PATTERN,
  DNS_SUBDOMAIN_MAX_LENGTH,
  DNS_SUBDOMAIN_PATTERN,
} from '../core/formats';
import { computeResourcesSchema, conditionsSchema, type Static, t } from '../core/schema';
import { backupRecordsSchema } from '../core/backup-records';
import { backupsListedFromSchema } from '../core/backup-list';
import { issuerRefSchema } from '../core/cert-manager';

/** A Kubernetes label selector (matchLabels, matchExpressions). */
function labelSelectorSchema(description: string) {
  return t.object(
    {
      matchLabels: t.map(t.string({ maxLength: 63 }), { description: 'Labels the objects must have.' }),
      matchExpressions: t.array(
        t.object({
          key: t.string({ required: true, minLength: 1, maxLength: 317 }),
          operator: t.enum(['In', 'NotIn', 'Exists', 'DoesNotExist'] as const, { required: true }),
          values: t.array(t.string({ maxLength: 63 }), { maxItems: 64 }),
        }),
        { maxItems: 16, description: 'Label requirements the objects must meet.' },
      ),
    },
    { description },
  );
}

/** The largest data or backup volume a member may ask for. */
const MAX_VOLUME = '64Ti';
/** The etcd minor releases the operator runs (and can upgrade between, one minor at a time). */
const SUPPORTED_VERSIONS = '^3\\.(5|6)\\.[0-9]{1,3}$';
/** The backup CronJob is `<name>-backup` and its Jobs add 11 characters: 52 - 7. */
export const MAX_NAME_WITH_BACKUP = 45;

/** A snapshot the backup Job named: `<cluster>-<UTC time>.db` (see `snapshotRotationScript`). */
export const SNAPSHOT_NAME_PATTERN = '^[a-z]([-a-z0-9]*[a-z0-9])?-[0-9]{8}T[0-9]{6}Z\\.db$';
/** A relative path inside a claim: no leading slash, no `..` part, no `=` or space. */
const CLAIM_PATH_PATTERN = '^[A-Za-z0-9_][-A-Za-z0-9_.]*(/[A-Za-z0-9_][-A-Za-z0-9_.]*)*$';

/** The etcd release a new cluster runs unless `spec.version` says otherwise. */
export const DEFAULT_ETCD_VERSION = '3.5.21';

/** Desired state of an etcd cluster. */
export const etcdClusterSpecSchema = t.object(
  {
    replicas: t.integer({
      default: 3,
      minimum: 1,
      maximum: 9,
      description:
        'Number of etcd members, from 1 to 9. Odd numbers tolerate the most failures for their size; an even number is accepted but reported in status.',
    }),
    version: t.string({
      default: DEFAULT_ETCD_VERSION,
      pattern: SUPPORTED_VERSIONS,
      description: 'etcd release as x.y.z, 3.5.x or 3.6.x, e.g. 3.5.21; the image is quay.io/coreos/etcd:v<version>.',
    }),
    storage: t.quantity({
      positive: true,
      maximum: MAX_VOLUME,
      default: '1Gi',
      description: "Size of each member's data volume (a PersistentVolumeClaim per member), e.g. 10Gi.",
    }),
    storageClassName: t.string({
      minLength: 1,
      maxLength: DNS_SUBDOMAIN_MAX_LENGTH,
      pattern: DNS_SUBDOMAIN_PATTERN,
      description: "StorageClass of the data volumes (a DNS name). Omitted: the cluster's default StorageClass.",
    }),
    backup: t.object(
      {
        schedule: t.string({
          required: true,
          maxLength: CRON_MAX_LENGTH,
          pattern: CRON_SCHEDULE_PATTERN,
          description:
            'When to take a snapshot, as a 5-field cron expression (each field in its range) or a macro, e.g. "0 */6 * * *" or @daily.',
        }),
        retention: t.integer({
          default: 7,
          minimum: 1,
          maximum: 1000,
          description: 'How many snapshots to keep; older ones are deleted after each new one.',
        }),
        storage: t.quantity({
          positive: true,
          maximum: MAX_VOLUME,
          default: '5Gi',
          description: 'Size of the backup volume.',
        }),
        storageClassName: t.string({
          minLength: 1,
          maxLength: DNS_SUBDOMAIN_MAX_LENGTH,
          pattern: DNS_SUBDOMAIN_PATTERN,
          description: "StorageClass of the backup volume (a DNS name). Omitted: the cluster's default StorageClass.",
        }),
        finalSnapshot: t.boolean({
          default: false,
          description:
            'Take one more snapshot when the cluster is deleted; the deletion waits until that Job has succeeded.',
        }),
      },
      {
        description:
          'Scheduled snapshots (etcdctl snapshot save) into a volume of their own, <name>-backups, which is kept when the cluster is deleted. Removing this removes the CronJob; the volume stays.',
      },
    ),
    defragmentation: t.object(
      {
        fragmentedPercent: t.integer({
          default: 50,
          minimum: 1,
          maximum: 100,
          description:
            'Defragment a member once this share of its database file is free pages (status.etcdMembers[].dbSizeBytes against dbSizeInUseBytes).',
        }),
        minimumSize: t.quantity({
          positive: true,
          maximum: MAX_VOLUME,
          default: '100Mi',
          description: 'Members whose database file is smaller than this are never defragmented.',
        }),
      },
      {
        description:
          'When the operator defragments members: one at a time, the leader last, only while every member is healthy and no version rolls out. Omitted: at 50 % free pages, from 100Mi.',
      },
    ),
    autoCompactionRetention: t.string({
      default: '1h',
      pattern: '^[1-9][0-9]{0,3}(h|m)?$',
      description:
        "How much history etcd keeps before compacting older revisions (etcd's --auto-compaction-retention, periodic mode), e.g. 1h, 30m or 72h; a number alone is hours. Compaction frees pages for a defragmentation to give back.",
    }),
    tls: t.object(
      {
        enabled: t.boolean({
          description:
            "Peer and client traffic over TLS, and only clients and members with a certificate of the cluster's own certificate authorities let in (etcd's --client-cert-auth and --peer-client-cert-auth). Omitted: on for a new cluster; a cluster made by an operator without TLS keeps plaintext. It cannot change once the cluster is made: a change is refused with Degraded=True (TLSChangeRefused).",
        }),
        issuerRef: issuerRefSchema(
          "Have cert-manager (installed in the cluster) issue the certificates instead of the operator's own CAs: the operator makes a Certificate per Secret (<name>-peer-tls, <name>-server-tls, <name>-client-tls) signed by this issuer, which must write ca.crt (CA, Vault and self-signed issuers do); cert-manager renews them. Set it when the cluster is made: a cluster whose certificates were issued keeps its issuer (a change is refused with Degraded=True, IssuerChangeRefused).",
        ),
        peerIssuerRef: issuerRefSchema(
          "Another issuer for the members' peer certificate only, so that no client certificate of issuerRef's CA is ever accepted on the peer port. Omitted: issuerRef's (the peer port then also checks the certificate's common name, <name>-member).",
        ),
      },
      {
        rules: [
          {
            rule: '!has(self.issuerRef) || !has(self.enabled) || self.enabled',
            message: 'issuerRef issues TLS certificates: it needs TLS (enabled omitted or true)',
            fieldPath: '.issuerRef',
          },
          {
            rule: '!has(self.peerIssuerRef) || has(self.issuerRef)',
            message: 'peerIssuerRef needs issuerRef: the members serve clients with a certificate of issuerRef',
            fieldPath: '.peerIssuerRef',
          },
        ],
        description:
          "Transport security. By default the operator makes two CAs per cluster (Secret <name>-ca), the members' certificates (<name>-peer-tls, <name>-server-tls) and a client certificate for users and backups (<name>-client-tls), and renews them before they expire; with issuerRef, cert-manager issues and renews the same Secrets.",
      },
    ),
    network: t.object(
      {
        policy: t.boolean({
          default: true,
          description:
            "Make a NetworkPolicy for the members (on clusters whose network enforces policies): the peer port from the cluster's members only; the client port from `clients`, the cluster's members and backup Jobs, and the kit's operators; the probe and metrics port from anywhere. false: none (one made before is deleted).",
        }),
        clients: t.array(
          t.object(
            {
              namespaceSelector: labelSelectorSchema(
                'Namespaces whose pods may connect (with podSelector: those pods of them).',
              ),
              podSelector: labelSelectorSchema(
                "Pods that may connect; without namespaceSelector, of the cluster's namespace.",
              ),
            },
            // An empty peer would let everyone in: give namespaceSelector, podSelector or both.
            { minProperties: 1 },
          ),
          {
            maxItems: 32,
            description:
              "Who may connect to the client port, as a NetworkPolicy's ingress peers. Omitted: every pod of the cluster's namespace.",
          },
        ),
      },
      { description: 'Who may reach the members over the network.' },
    ),
    resources: computeResourcesSchema(
      'Compute resources of each etcd member: requests (e.g. {cpu: 100m, memory: 256Mi}) and limits, never a request above its limit.',
    ),
    restore: t.object(
      {
        backup: t.string({
          maxLength: 253,
          pattern: SNAPSHOT_NAME_PATTERN,
          description:
            "A snapshot the backups of an EtcdCluster wrote, by the name status.backups shows, e.g. my-etcd-20261129T020000Z.db: read from that cluster's claim <cluster>-backups, which outlives it.",
        }),
        claim: t.string({
          minLength: 1,
          maxLength: DNS_SUBDOMAIN_MAX_LENGTH,
          pattern: DNS_SUBDOMAIN_PATTERN,
          description: 'A PersistentVolumeClaim of this namespace holding the snapshot (with path), instead of backup.',
        }),
        path: t.string({
          minLength: 1,
          maxLength: 1024,
          pattern: CLAIM_PATH_PATTERN,
          description: 'The snapshot file inside claim, a relative path, e.g. snapshots/etcd.db.',
        }),
      },
      {
        rules: [
          {
            rule: 'has(self.backup) != (has(self.claim) || has(self.path))',
            message: 'give either backup, or claim and path',
            fieldPath: '.backup',
          },
          {
            rule: 'has(self.claim) == has(self.path)',
            message: 'claim and path go together: the snapshot is the file path inside the claim',
            fieldPath: '.claim',
          },
        ],
        description:
          "Seed a new cluster from a snapshot: before any member first starts, each member's volume gets the snapshot restored (etcdutl snapshot restore) with the member's own name and peer URL. Refused with Degraded=True (RestoreFailed) when the snapshot is missing or fails its integrity check, or a member's volume already holds data. It cannot change once the cluster exists.",
      },
    ),
  },
  {
    description: 'EtcdClusterSpec defines the desired state of an etcd cluster.',
    default: {},
    rules: [
      {
        // A transition rule on the spec, not on restore itself: those run only when both old and
        // new have the field, and adding or removing one must be refused too.
        rule: 'has(self.restore) == has(oldSelf.restore) && (!has(self.restore) || self.restore == oldSelf.restore)',
        message: 'restore cannot be added, changed or removed once the cluster exists: it seeds a new cluster',
        fieldPath: '.restore',
        reason: 'FieldValueForbidden',
      },
    ],
  },
);

/** Observed state of an etcd cluster, written by the reconciler. */
export const etcdClusterStatusSchema = t.object(
  {
    phase: t.enum(['Creating', 'Restoring', 'Running', 'Scaling', 'Upgrading', 'Failed'] as const, {
      description: "Summary of the cluster's state.",
    }),
    members: t.array(t.string(), { description: 'Names of the member pods that exist now, sorted.' }),
    etcdMembers: t.array(
      t.object({
        name: t.string({ description: "Member name (its pod's name)." }),
        id: t.string({ description: 'Member ID, in decimal, as etcdctl --write-out=json shows it.' }),
        learner: t.boolean({ description: 'A learner: replicates but does not vote until promoted.' }),
        started: t.boolean({
          description: 'Whether the member has started; an added member has not until its pod runs etcd.',
        }),
        healthy: t.boolean({ description: 'Whether it answered the operator and knows a leader.' }),
        leader: t.boolean({ description: 'Whether it is the leader.' }),
        version: t.string({ description: 'The etcd version it runs.' }),
        dbSizeBytes: t.integer({ minimum: 0, description: "Its database file's size, in bytes." }),
        dbSizeInUseBytes: t.integer({
          minimum: 0,
          description:
            'The part of its database file in use, in bytes; the rest is free pages a defragmentation gives back.',
        }),
        claimUID: t.string({
          description:
            'The uid of the data claim it last ran on while healthy. A member not healthy on a claim of another uid has lost its data, and the operator replaces it.',
        }),
      }),
      { description: 'The member list as etcd reports it (through its members API), in ordinal order.' },
    ),
    step: t.string({
      description: 'What the operator is doing to membership or versions, or waiting for; absent when settled.',
    }),
    version: t.string({ description: 'The oldest etcd version a member runs.' }),
    transport: t.enum(['TLS', 'Plaintext'] as const, {
      description: 'How the members talk, as the cluster was made: TLS with client certificates, or plaintext.',
    }),
    certificatesExpire: t.dateTime({
      description:
        "When the first of the members' and the client certificate expires; renewed a third of their life before.",
    }),
    backupCronJob: t.string({ description: 'The CronJob taking snapshots, when backups are scheduled.' }),
    lastBackupTime: t.dateTime({ description: 'When the last scheduled snapshot finished successfully.' }),
    backups: backupRecordsSchema('snapshot'),
    backupsListedFrom: backupsListedFromSchema(),
    restoredFrom: t.string({ description: 'The snapshot the cluster was seeded from (spec.restore), as claim/path.' }),
    replicas: t.integer({ minimum: 0, description: 'Member pods the StatefulSet has.' }),
    readyReplicas: t.integer({ minimum: 0, description: 'Member pods that are ready.' }),
    clientService: t.string({ description: 'The Service clients connect to, as host:port.' }),
    observedGeneration: t.integer({
      minimum: 0,
      description: 'The .metadata.generation the status was computed from.',
    }),
    conditions: conditionsSchema(),
  },
  { description: 'EtcdClusterStatus defines the observed state of an etcd cluster.' },
);

export type EtcdClusterSpec = Static<typeof etcdClusterSpecSchema>;
export type EtcdClusterStatus = Static<typeof etcdClusterStatusSchema>;
export type EtcdCluster = CustomResource<typeof etcdClusterSpecSchema, typeof etcdClusterStatusSchema>;

/** `etcdclusters.etcd.database.coreos.com`, v1alpha1, short name `etcd` (seed 000). */
export const etcdClusterKind = new CustomResourceKind({
  group: 'etcd.database.coreos.com',
  kind: 'EtcdCluster',
  versions: ['v1alpha1'],
  // The StatefulSet takes the cluster's name (its pods' revision label adds 11 characters) and Services take it too.
  maxNameLength: 52,
  dns1035Name: true,
  description:
    'EtcdCluster is an etcd cluster run as a StatefulSet with a data volume per member, kept at the requested size by the etcd operator.',
  spec: etcdClusterSpecSchema,
  status: etcdClusterStatusSchema,
  specRequired: false,
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.readyReplicas' },
  printerColumns: [
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', description: 'Requested members' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Ready members' },
    { name: 'Version', type: 'string', jsonPath: '.spec.version' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
  ],
  shortNames: ['etcd'],
  categories: ['all'],
  validations: [
    {
      // The restore Jobs seed the member list of spec.replicas members: a cluster restored into a
      // different list would not form. On the whole resource, as the rule reads the status.
      rule: "!has(oldSelf.spec) || !has(oldSelf.spec.restore) || !has(self.spec) || self.spec.replicas == oldSelf.spec.replicas || (has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'Restored' && c.status == 'True'))",
      message:
        'replicas cannot change until the restore is done (condition Restored): the restore Jobs seed that many members',
      fieldPath: '.spec.replicas',
      reason: 'FieldValueForbidden',
    },
    {
      rule: `!has(self.spec) || !has(self.spec.backup) || size(self.metadata.name) <= ${MAX_NAME_WITH_BACKUP}`,
      message: `must be at most ${MAX_NAME_WITH_BACKUP} characters when spec.backup is set: the backup CronJob is <name>-backup, and its Jobs add 11 characters`,
      fieldPath: NAME_FIELD,
    },
  ],
});
