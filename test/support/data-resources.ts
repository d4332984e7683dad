/**
 * An EtcdCluster `kv` in `db` and a Database `orders` in `shop` as the API server would hand them
 * to the reconciler (a uid, generation 1), for the unit tests of the data kinds' renders and
 * statuses: `spec` merged over a small valid spec, `status` when given.
 */

export const etcdResource = (spec: object, status?: object) =>
  ({
    apiVersion: 'etcd.database.coreos.com/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name: 'kv', namespace: 'db', uid: 'u-kv', generation: 1 },
    spec: { replicas: 3, version: '3.5.21', storage: '2Gi', ...spec },
    ...(status ? { status } : {}),
  }) as any;

/** `backupsEnabled`: the spec's backups on (at 02:00 daily) or off. */
export const databaseResource = (spec: object, status?: object, backupsEnabled = false) =>
  ({
    apiVersion: 'database.example.com/v1alpha1',
    kind: 'Database',
    metadata: { name: 'orders', namespace: 'shop', uid: 'u-orders', generation: 1 },
    spec: {
      type: 'postgresql',
      version: '13',
      storage: { size: '1Gi' },
      backup: { enabled: backupsEnabled, schedule: '0 2 * * *', finalSnapshot: false },
      tls: { enabled: true, required: false },
      deletionPolicy: 'Retain',
      ...spec,
    },
    ...(status ? { status } : {}),
  }) as any;
