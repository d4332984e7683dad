import { type Construct } from 'constructs';
import { Operator } from '../core/operator';
import type { OperatorOptions } from '../core/operator-props';
import { cronTabController } from './controller';

export interface CronTabOperatorProps extends OperatorOptions {}

/** The CronTab operator: the `crontabs.stable.example.com` CRD, RBAC and the `crontab` controller. */
export class CronTabOperator extends Operator {
  constructor(scope: Construct, id: string, props: CronTabOperatorProps = {}) {
    super(scope, id, { ...props, controllers: [cronTabController] });
  }
}
