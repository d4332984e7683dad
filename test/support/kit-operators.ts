/** The kit's five operator constructs, by name, each made the same way: for tests that go over all of them. */
import type { Construct } from 'constructs';
import {
  CronTabOperator,
  DatabaseOperator,
  EtcdClusterOperator,
  MemcachedOperator,
  type Operator,
  type OperatorOptions,
  WebAppOperator,
} from '../../constructs';

export type MakeOperator = (scope: Construct, id: string, options?: OperatorOptions) => Operator;

export const KIT_OPERATORS: readonly (readonly [name: string, make: MakeOperator])[] = [
  ['memcached', (s, id, o) => new MemcachedOperator(s, id, o)],
  ['etcd', (s, id, o) => new EtcdClusterOperator(s, id, o)],
  ['crontab', (s, id, o) => new CronTabOperator(s, id, o)],
  ['webapp', (s, id, o) => new WebAppOperator(s, id, o)],
  ['database', (s, id, o) => new DatabaseOperator(s, id, o)],
];
