import { type Construct } from 'constructs';
import { Operator } from '../core/operator';
import type { OperatorOptions } from '../core/operator-props';
import { applicationController, webAppController } from './controller';

export interface WebAppOperatorProps extends OperatorOptions {}

/**
 * The web operator: the Application (`app.aiops.org`) and WebApp (`apps.example.com`) CRDs,
 * RBAC, and one reconciler running both controllers.
 */
export class WebAppOperator extends Operator {
  constructor(scope: Construct, id: string, props: WebAppOperatorProps = {}) {
    super(scope, id, { ...props, controllers: [applicationController, webAppController] });
  }
}
