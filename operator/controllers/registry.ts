import type { Logger } from 'pino';
import type { ControllerDeclaration } from '../../constructs/core/controller';
import { cronTabController } from '../../constructs/crontab/controller';
import { databaseController } from '../../constructs/database/controller';
import { etcdClusterController } from '../../constructs/etcd/controller';
import { memcachedController } from '../../constructs/memcached/controller';
import { applicationController, webAppController } from '../../constructs/webapp/controller';
import { KubeClient } from '../runtime/client';
import { Controller } from '../runtime/controller';
import { EventRecorder } from '../runtime/events';
import { Manager } from '../runtime/manager';
import { Metrics } from '../runtime/metrics';
import { RateLimiterOptions } from '../runtime/workqueue';
import { setupCronTabController } from './crontab';
import { setupDatabaseController } from './database';
import { setupEtcdClusterController } from './etcdcluster';
import { setupMemcachedController } from './memcached';
import { setupApplicationController, setupWebAppController } from './webapp';

export interface ControllerSetupOptions {
  readonly client: KubeClient;
  readonly recorder: EventRecorder;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly maxConcurrentReconciles?: number;
  readonly rateLimiter?: RateLimiterOptions;
}

export interface RegisteredController {
  readonly declaration: ControllerDeclaration;
  readonly setup: (mgr: Manager, options: ControllerSetupOptions) => Controller;
}

/** Every controller this reconciler image can run, by the name `--controllers` uses. */
export const CONTROLLERS: Record<string, RegisteredController> = {
  [memcachedController.name]: { declaration: memcachedController, setup: setupMemcachedController },
  [etcdClusterController.name]: { declaration: etcdClusterController, setup: setupEtcdClusterController },
  [cronTabController.name]: { declaration: cronTabController, setup: setupCronTabController },
  [applicationController.name]: { declaration: applicationController, setup: setupApplicationController },
  [webAppController.name]: { declaration: webAppController, setup: setupWebAppController },
  [databaseController.name]: { declaration: databaseController, setup: setupDatabaseController },
};
