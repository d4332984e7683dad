/**
 * Constructs that synthesize complete Kubernetes operators: kinds, CRDs, least-privilege RBAC,
 * the reconciler Deployment, and `ConstructOperator` for any construct.
 *
 * @module cdk8s-operator-kit
 */
export * from './core/schema';
export * from './core/structural';
export * from './core/kind';
export * from './core/crd';
export * from './contract';
export * from './core/rbac';
export * from './core/labels';
export * from './core/security';
export * from './core/operator';
export * from './memcached/api';
export * from './memcached/controller';
export * from './memcached/operator';
export * from './memcached/memcached-deployment';
export * from './etcd/api';
export * from './etcd/controller';
export * from './etcd/operator';
export * from './etcd/etcd-cluster-resources';
export * from './core/quantity';
export * from './mongodb/api';
export * from './mongodb/storage';
export * from './crontab/api';
export * from './crontab/controller';
export * from './crontab/operator';
export * from './crontab/crontab-cronjob';
export * from './webapp/api';
export * from './webapp/controller';
export * from './webapp/operator';
export * from './webapp/web-workload';
export * from './database/api';
export * from './database/controller';
export * from './database/operator';
export * from './database/database-resources';
export * from './core/construct-operator';
export * from './core/conditions';
export * from './core/pods';
export * from './core/render';
