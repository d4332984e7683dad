import * as path from 'node:path';
import { App, Chart } from 'cdk8s';
import { EtcdClusterOperator, MemcachedOperator } from './constructs';
import { MemcachedV1 } from './imports/cache.example.com';
import { EtcdCluster } from './imports/etcd.database.coreos.com';

/**
 * Builds every operator (to `outdir`) and every sample resource (to `outdir/samples`).
 *
 * Each operator's cluster-scoped chart comes first, so `kubectl apply -f dist/` installs in
 * order. Samples live apart: they can only be applied once their CRDs are established, so they
 * must not ride in the same `kubectl apply`.
 */
export function buildApps(outdir: string): { operators: App; samples: App } {
  const operators = new App({ outdir });
  new MemcachedOperator(operators, 'memcached');
  new EtcdClusterOperator(operators, 'etcd');

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
  return { operators, samples };
}

if (require.main === module) {
  const { operators, samples } = buildApps(process.env.CDK8S_OUTDIR ?? 'dist');
  operators.synth();
  samples.synth();
}
