import { ChartProps } from 'cdk8s';
import { Construct } from 'constructs';
import { Operator, OperatorOptions } from '../core/operator';
import { memcachedController } from './controller';

/** Options of the Memcached operator; every one has a default. */
export interface MemcachedOperatorProps extends OperatorOptions {}

/**
 * The Memcached operator: the `memcacheds.cache.example.com` CRD, least-privilege RBAC and the
 * reconciler running the `memcached` controller.
 *
 * @example
 * const app = new App();
 * new MemcachedOperator(app, 'memcached');
 * app.synth(); // dist/0000-memcached-cluster.k8s.yaml, dist/0001-memcached.k8s.yaml
 */
export class MemcachedOperator extends Operator {
  constructor(scope: Construct, id: string, props: MemcachedOperatorProps = {}, chartProps?: ChartProps) {
    super(scope, id, { ...props, controllers: [memcachedController] }, chartProps);
  }
}
