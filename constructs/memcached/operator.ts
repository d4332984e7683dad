import { type Construct } from 'constructs';
import { Operator } from '../core/operator';
import type { OperatorOptions } from '../core/operator-props';
import { memcachedController } from './controller';

/** Options of the Memcached operator; every one has a default. */
export interface MemcachedOperatorProps extends OperatorOptions {}

/**
 * The Memcached operator: the `memcacheds.cache.example.com` CRD, least-privilege RBAC and the
 * reconciler running the `memcached` controller.
 *
 * @example
 * const app = new App();
 * const cluster = new Chart(app, 'memcached-cluster'); // CRD, ClusterRole: applied first
 * new MemcachedOperator(new Chart(app, 'memcached'), 'memcached', { clusterScope: cluster });
 * app.synth(); // dist/0000-memcached-cluster.k8s.yaml, dist/0001-memcached.k8s.yaml
 */
export class MemcachedOperator extends Operator {
  constructor(scope: Construct, id: string, props: MemcachedOperatorProps = {}) {
    super(scope, id, { ...props, controllers: [memcachedController] });
  }
}
