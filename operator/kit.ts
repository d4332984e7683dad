import type { ControllerDeclaration } from '../constructs/contract';
import { cronTabController } from '../constructs/crontab/controller';
import { databaseController } from '../constructs/database/controller';
import { etcdClusterController } from '../constructs/etcd/controller';
import { memcachedController } from '../constructs/memcached/controller';
import { applicationController, webAppController } from '../constructs/webapp/controller';

/** Every controller the kit's image runs, by the name `--controllers` uses. */
export const KIT_CONTROLLERS: readonly ControllerDeclaration[] = [
  memcachedController,
  etcdClusterController,
  cronTabController,
  applicationController,
  webAppController,
  databaseController,
];
