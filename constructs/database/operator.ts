import { type Construct } from 'constructs';
import { Operator } from '../core/operator';
import type { OperatorOptions } from '../core/operator-props';
import { databaseController } from './controller';

export interface DatabaseOperatorProps extends OperatorOptions {}

/** The Database operator: `databases.database.example.com`, RBAC and the `database` controller. */
export class DatabaseOperator extends Operator {
  constructor(scope: Construct, id: string, props: DatabaseOperatorProps = {}) {
    super(scope, id, { ...props, controllers: [databaseController] });
  }
}
