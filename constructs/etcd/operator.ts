import { type Construct } from 'constructs';
import { Operator } from '../core/operator';
import type { OperatorOptions } from '../core/operator-props';
import { etcdClusterController } from './controller';

export interface EtcdClusterOperatorProps extends OperatorOptions {}

/**
 * The etcd operator: the `etcdclusters.etcd.database.coreos.com` CRD, least-privilege RBAC and
 * the reconciler running the `etcdcluster` controller.
 */
export class EtcdClusterOperator extends Operator {
  constructor(scope: Construct, id: string, props: EtcdClusterOperatorProps = {}) {
    super(scope, id, { ...props, controllers: [etcdClusterController] });
  }
}
