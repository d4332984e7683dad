import * as path from 'node:path';
import { App, Chart, Include } from 'cdk8s';
import {
  CronTabOperator,
  CustomResourceDefinition,
  DatabaseOperator,
  EtcdClusterOperator,
  MemcachedOperator,
  MongoDbStorage,
  mongoDbCommunityKind,
  WebAppOperator,
} from './constructs';
import { MemcachedV1 } from './imports/cache.example.com';
import {
  MongoDbCommunity,
  MongoDbCommunitySpecSecurityAuthenticationModes,
  MongoDbCommunitySpecType,
} from './imports/mongodb.com';
import { EtcdCluster } from './imports/etcd.database.coreos.com';
import { CronTab } from './imports/stable.example.com';
import { Application } from './imports/app.aiops.org';
import { WebApp } from './imports/apps.example.com';
import { Database, DatabaseSpecType } from './imports/database.example.com';

/** The Prometheus Operator CRDs the operators' monitoring objects are written for (vendor/prometheus-operator). */
const PROMETHEUS_OPERATOR_CRDS = ['servicemonitors', 'prometheusrules'].map((plural) =>
  path.join(__dirname, 'vendor', 'prometheus-operator', `monitoring.coreos.com_${plural}.yaml`),
);

/**
 * Builds every operator (to `outdir`), the third-party CRDs we write resources for
 * (`outdir/crds`), and the sample resources (`outdir/samples`, and `outdir/samples/mongodb`).
 *
 * Each operator's cluster-scoped chart comes first, so `kubectl apply -f dist/` installs in
 * order. Samples live apart: they can only be applied once their CRDs are established, so they
 * must not ride in the same `kubectl apply`.
 */
export function buildApps(outdir: string): Record<'operators' | 'crds' | 'samples' | 'mongodb', App> {
  const operators = new App({ outdir });
  // Each operator in a chart of its own, its cluster-scoped objects in a chart applied before it.
  const operator = <P>(
    id: string,
    make: (scope: Chart, id: string, props: P & { clusterScope: Chart }) => unknown,
    props = {} as P,
  ) => {
    const cluster = new Chart(operators, `${id}-cluster`);
    make(new Chart(operators, id), id, { ...props, clusterScope: cluster });
  };
  operator('memcached', (s, id, p) => new MemcachedOperator(s, id, p));
  operator('etcd', (s, id, p) => new EtcdClusterOperator(s, id, p));
  operator('crontab', (s, id, p) => new CronTabOperator(s, id, p));
  operator('webapp', (s, id, p) => new WebAppOperator(s, id, p));
  operator('database', (s, id, p) => new DatabaseOperator(s, id, p));
  // Third-party CRDs we write resources for (installed by their own operators, not by us):
  // dist/crds/, imported to typed classes by `npm run import`.
  const crds = new App({ outdir: path.join(outdir, 'crds') });
  for (const group of ['mongodb.com', 'mongodbcommunity.mongodb.com'] as const) {
    new CustomResourceDefinition(new Chart(crds, group.replace(/\./g, '-')), 'MongoDBCommunity', {
      kind: mongoDbCommunityKind(group),
    });
  }

  // The Prometheus Operator's ServiceMonitor and PrometheusRule, as published (vendor/): what the
  // operators' `monitoring` objects are typed from and applied against.
  const monitoring = new Chart(crds, 'monitoring-coreos-com');
  for (const file of PROMETHEUS_OPERATOR_CRDS) new Include(monitoring, path.basename(file, '.yaml'), { url: file });

  const samples = new App({ outdir: path.join(outdir, 'samples') });
  const memcachedSamples = new Chart(samples, 'memcached-sample');
  // Written with the class `cdk8s import` generated from our own CRD (imports/).
  new MemcachedV1(memcachedSamples, 'memcached-sample', {
    metadata: { name: 'memcached-sample' },
    spec: { size: 3, image: 'memcached:1.6' },
  });
  // Seed 000's cluster: three members, 10Gi of data each.
  new EtcdCluster(new Chart(samples, 'etcd-sample'), 'my-etcd-cluster', {
    metadata: { name: 'my-etcd-cluster' },
    spec: { replicas: 3, storage: '10Gi' },
  });
  // Seed 000's CronTab, seconds field and all (the controller reports what it does with it).
  new CronTab(new Chart(samples, 'crontab-sample'), 'my-new-cron-object', {
    metadata: { name: 'my-new-cron-object' },
    spec: { cronSpec: '* * * * * *', image: 'busybox' },
  });
  // Seed 002's Application: its Service on port 8080, behind an nginx Ingress for example.foo.com;
  // the container port is the one nginx:alpine listens on (80).
  new Application(new Chart(samples, 'application-sample'), 'application-sample', {
    metadata: { name: 'application-sample' },
    spec: {
      image: 'nginx:alpine',
      replicas: 1,
      port: 80,
      service: { port: 8080 },
      ingress: { host: 'example.foo.com', className: 'nginx' },
    },
  });
  // Seed 001's WebApp.
  new WebApp(new Chart(samples, 'webapp-sample'), 'my-webapp', {
    metadata: { name: 'my-webapp' },
    spec: { replicas: 3, image: 'nginx:alpine', port: 80, domain: 'example.com' },
  });
  // Seed 001's Database: PostgreSQL 13 on 10Gi, dumped at 02:00 daily.
  new Database(new Chart(samples, 'database-sample'), 'my-db', {
    metadata: { name: 'my-db' },
    spec: {
      type: DatabaseSpecType.POSTGRESQL,
      version: '13',
      storage: { size: '10Gi' },
      backup: { enabled: true, schedule: '0 2 * * *' },
    },
  });
  // Seed 000's MongoDB: storage first, then the replica set through the MongoDB Community
  // operator's API. Its own folder, since it needs that operator (or at least its CRD).
  const mongodb = new App({ outdir: path.join(outdir, 'samples', 'mongodb') });
  // Seed 000: NFS-backed storage for the 3-member MongoDB replica set `example-mongodb`, made
  // before the replica set so its StatefulSet finds one bound claim per member.
  const storage = new MongoDbStorage(mongodb, 'mongodb-storage', {
    replicaSetName: 'example-mongodb',
    namespace: 'mongodb',
    members: 3,
    data: {
      capacity: '1Gi',
      request: '500Mi',
      nfs: { server: '192.168.40.180', paths: ['/data/p1', '/data/p2', '/data/p3'] },
    },
    volumeAccessModes: ['ReadWriteOnce', 'ReadWriteMany', 'ReadOnlyMany'],
    claimAccessModes: ['ReadWriteMany'],
  });

  // Seed 000's replica set, through the MongoDB Community operator's API (release 0.5.0's group).
  // The password lives in a Secret the user creates; the resource only refers to it.
  const replicaSet = new Chart(mongodb, 'mongodb-replica-set', { namespace: 'mongodb' });
  replicaSet.addDependency(storage);
  new MongoDbCommunity(replicaSet, 'example-mongodb', {
    metadata: { name: 'example-mongodb' },
    spec: {
      members: 3,
      type: MongoDbCommunitySpecType.REPLICA_SET,
      version: '4.2.6',
      security: { authentication: { modes: [MongoDbCommunitySpecSecurityAuthenticationModes.SCRAM] } },
      users: [
        {
          name: 'my-user',
          db: 'admin',
          passwordSecretRef: { name: 'my-user-password' },
          roles: [
            { name: 'clusterAdmin', db: 'admin' },
            { name: 'userAdminAnyDatabase', db: 'admin' },
          ],
          scramCredentialsSecretName: 'my-scram',
        },
      ],
    },
  });
  return { operators, crds, samples, mongodb };
}

if (require.main === module) {
  Object.values(buildApps(process.env.CDK8S_OUTDIR ?? 'dist')).forEach((app) => {
    app.synth();
  });
}
