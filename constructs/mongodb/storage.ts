import { ApiObject, Chart, JsonPatch } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { PART_OF } from '../core/labels';
import { parseQuantity } from '../contract/quantity';

/** One NFS export per replica set member. */
export interface NfsExports {
  /** NFS server address or host name. */
  readonly server: string;
  /** Exported path for each member, in member order; as many as there are members. */
  readonly paths: readonly string[];
  /** @default ['hard', 'nfsvers=4.1'] */
  readonly mountOptions?: readonly string[];
}

/** Storage for one kind of volume (data or logs) of every member. */
export interface MongoDbVolumeOptions {
  /** What each claim asks for. @default the volume capacity, or '1Gi' with a StorageClass */
  readonly request?: string;
  /** Size of each NFS PersistentVolume (NFS variant). @default '1Gi' */
  readonly capacity?: string;
  /** NFS exports: one PersistentVolume per member, pre-bound to its claim. @default none: give this or `storageClassName` */
  readonly nfs?: NfsExports;
  /** StorageClass variant: claims only, provisioned by this class. Give this or `nfs`. @default none: give this or `nfs` */
  readonly storageClassName?: string;
}

export interface MongoDbStorageProps {
  /** The MongoDBCommunity's name, e.g. `example-mongodb`: claims are named after its StatefulSet. */
  readonly replicaSetName: string;
  /** Namespace of the replica set and its claims. */
  readonly namespace: string;
  /** Replica set members. @default 3 */
  readonly members?: number;
  /** The data volumes: claims `data-volume-<name>-<i>`. */
  readonly data: MongoDbVolumeOptions;
  /** The logs volumes, when wanted: claims `logs-volume-<name>-<i>`. @default - none */
  readonly logs?: MongoDbVolumeOptions;
  /** Access modes of the PersistentVolumes. @default ['ReadWriteOnce'] */
  readonly volumeAccessModes?: readonly string[];
  /** Access modes the claims ask for. @default ['ReadWriteOnce'] */
  readonly claimAccessModes?: readonly string[];
  /** Create the namespace. @default true */
  readonly createNamespace?: boolean;
  /**
   * Where the volumes and the Namespace go (cluster-scoped): a chart of their own is applied
   * before the claims' chart, which then depends on it.
   * @default the chart the storage is in
   */
  readonly volumesScope?: Construct;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const ACCESS_MODES = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'];

/**
 * Persistent storage for a MongoDB Community replica set, made before the replica set so its
 * StatefulSet finds its claims: PersistentVolumeClaims named exactly as the community operator's
 * StatefulSet claims them (`data-volume-<name>-<i>`, `logs-volume-<name>-<i>`), and, in the NFS
 * variant, one NFS PersistentVolume per claim (Retain, mount options `hard`, `nfsvers=4.1`),
 * pre-bound both ways so each claim binds to its own volume and nothing else.
 *
 * A construct that writes into the chart it is placed in: the claims in the replica set's
 * namespace; the volumes and the Namespace (cluster-scoped, never given a namespace) in
 * `volumesScope`, by default the same chart. Placed directly in an App, it makes a chart of the
 * claims, `<id>`, depending on a chart of the volumes, `<id>-volumes`.
 */
export class MongoDbStorage extends Construct {
  /** Where the volumes and the Namespace are. */
  readonly volumesScope: Construct;
  readonly persistentVolumes: k8s.KubePersistentVolume[] = [];
  readonly claims: k8s.KubePersistentVolumeClaim[] = [];

  constructor(scope: Construct, id: string, props: MongoDbStorageProps) {
    validateStorageProps(props);
    const inChart = scope.node.scopes.some((s) => Chart.isChart(s));
    const volumesParent = props.volumesScope ?? (inChart ? undefined : new Chart(scope, `${id}-volumes`));
    super(inChart ? scope : new Chart(scope, id), id);
    this.volumesScope = new Construct(volumesParent ?? this, 'Volumes');
    const ownChart = Chart.of(this);
    const volumesChart = Chart.of(this.volumesScope);
    if (volumesChart !== ownChart) ownChart.addDependency(volumesChart);
    const members = props.members ?? 3;
    const labels = {
      'app.kubernetes.io/name': 'mongodb',
      'app.kubernetes.io/instance': props.replicaSetName,
      'app.kubernetes.io/component': 'storage',
      'app.kubernetes.io/part-of': PART_OF,
      'app.kubernetes.io/managed-by': 'cdk8s',
    };
    if (props.createNamespace ?? true) {
      new k8s.KubeNamespace(this.volumesScope, 'Namespace', { metadata: { name: props.namespace } });
    }
    const volumes: [string, MongoDbVolumeOptions][] = [['data-volume', props.data]];
    if (props.logs) volumes.push(['logs-volume', props.logs]);
    for (const [volume, options] of volumes) {
      for (let i = 0; i < members; i++) this.addMemberVolume(props, { volume, options, ordinal: i, labels });
    }
    // A chart's namespace would be stamped on the volumes and the Namespace too.
    if (volumesChart.namespace) {
      for (const o of this.volumesScope.node.findAll())
        if (o instanceof ApiObject) o.addJsonPatch(JsonPatch.remove('/metadata/namespace'));
    }
  }

  /** One member's claim, and with NFS the volume pre-bound to it both ways. */
  private addMemberVolume(
    props: MongoDbStorageProps,
    member: { volume: string; options: MongoDbVolumeOptions; ordinal: number; labels: Record<string, string> },
  ): void {
    const { volume, options, ordinal: i } = member;
    const claimName = `${volume}-${props.replicaSetName}-${i}`;
    const memberLabels = {
      ...member.labels,
      'cdk8s-operator-kit.io/volume': volume,
      'cdk8s-operator-kit.io/member': String(i),
    };
    const request = options.request ?? options.capacity ?? '1Gi';
    let volumeName: string | undefined;
    // Validated above: one export path per member.
    const path = options.nfs?.paths[i];
    if (options.nfs && path !== undefined) {
      volumeName = `${props.namespace}-${claimName}`;
      this.persistentVolumes.push(
        new k8s.KubePersistentVolume(this.volumesScope, `Pv-${volume}-${i}`, {
          metadata: { name: volumeName, labels: memberLabels },
          spec: {
            capacity: { storage: k8s.Quantity.fromString(options.capacity ?? '1Gi') },
            volumeMode: 'Filesystem',
            accessModes: [...(props.volumeAccessModes ?? ['ReadWriteOnce'])],
            persistentVolumeReclaimPolicy: 'Retain',
            // No class: only claims that name this volume may bind it.
            storageClassName: '',
            mountOptions: [...(options.nfs.mountOptions ?? ['hard', 'nfsvers=4.1'])],
            nfs: { server: options.nfs.server, path },
            claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: props.namespace, name: claimName },
          },
        }),
      );
    }
    this.claims.push(
      new k8s.KubePersistentVolumeClaim(this, `Pvc-${volume}-${i}`, {
        metadata: { name: claimName, namespace: props.namespace, labels: memberLabels },
        spec: {
          accessModes: [...(props.claimAccessModes ?? ['ReadWriteOnce'])],
          volumeMode: 'Filesystem',
          storageClassName: options.nfs ? '' : options.storageClassName,
          volumeName,
          resources: { requests: { storage: k8s.Quantity.fromString(request) } },
        },
      }),
    );
  }
}

type Fail = (msg: string) => never;

function validateStorageProps(p: MongoDbStorageProps): void {
  const where = `MongoDbStorage ${JSON.stringify(p.replicaSetName)}`;
  const fail: Fail = (msg) => {
    throw new Error(`${where}: ${msg}`);
  };
  if (!DNS_SUBDOMAIN.test(p.replicaSetName) || p.replicaSetName.length > 40)
    fail('replicaSetName must be a lower-case DNS name of at most 40 characters, e.g. "example-mongodb"');
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(p.namespace))
    fail(`namespace ${JSON.stringify(p.namespace)} must be a lower-case DNS label`);
  const members = p.members ?? 3;
  if (!Number.isInteger(members) || members < 1 || members > 50)
    fail(`members must be a whole number from 1 to 50, got ${members}`);
  for (const modes of [p.volumeAccessModes, p.claimAccessModes]) {
    for (const m of modes ?? [])
      if (!ACCESS_MODES.includes(m)) fail(`access mode ${JSON.stringify(m)} is not one of ${ACCESS_MODES.join(', ')}`);
  }
  for (const [name, v] of [
    ['data', p.data],
    ['logs', p.logs],
  ] as const) {
    if (v) validateVolumes(p, name, v, fail);
  }
}

type VolumeProps = NonNullable<MongoDbStorageProps['data']>;

/** One set of volumes (data or logs): NFS or a storage class, and claims that can bind them. */
function validateVolumes(p: MongoDbStorageProps, name: string, v: VolumeProps, fail: Fail): void {
  if (!v.nfs && !v.storageClassName) fail(`${name}: give nfs (server and one path per member) or a storageClassName`);
  if (v.nfs && v.storageClassName) fail(`${name}: give nfs or storageClassName, not both`);
  const request = quantity(fail, `${name}.request`, v.request ?? v.capacity ?? '1Gi');
  if (!v.nfs) return;
  const capacity = quantity(fail, `${name}.capacity`, v.capacity ?? '1Gi');
  if (request > capacity)
    fail(
      `${name}: each claim asks ${v.request} but each volume holds ${v.capacity ?? '1Gi'}; a claim cannot bind a smaller volume — lower request or raise capacity`,
    );
  validateNfs(name, v.nfs, p.members ?? 3, fail);
  const claimModes = p.claimAccessModes ?? ['ReadWriteOnce'];
  const volumeModes = p.volumeAccessModes ?? ['ReadWriteOnce'];
  const unsupported = claimModes.filter((m) => !volumeModes.includes(m));
  if (unsupported.length)
    fail(
      `claims ask for ${unsupported.join(', ')}, which the volumes do not offer (${volumeModes.join(', ')}); they would never bind`,
    );
}

/** A server and one distinct absolute export path per member. */
function validateNfs(name: string, nfs: NonNullable<VolumeProps['nfs']>, members: number, fail: Fail): void {
  if (!nfs.server.trim()) fail(`${name}.nfs.server is empty; give the NFS server's address`);
  if (nfs.paths.length !== members)
    fail(
      `${name}.nfs.paths has ${nfs.paths.length} path(s) for ${members} members; give exactly one export path per member`,
    );
  const bad = nfs.paths.find((x) => !x.startsWith('/'));
  if (bad !== undefined) fail(`${name}.nfs.paths: ${JSON.stringify(bad)} is not an absolute path`);
  if (new Set(nfs.paths).size !== nfs.paths.length)
    fail(`${name}.nfs.paths lists one path twice; members must not share a data directory`);
}

function quantity(fail: (m: string) => never, field: string, value: string): number {
  try {
    return parseQuantity(value);
  } catch {
    return fail(`${field} ${JSON.stringify(value)} is not a Kubernetes quantity; use forms like 500Mi, 1Gi`);
  }
}
