import type { ControllerDeclaration } from './core/controller-declaration';
import { cronTabController } from './crontab/controller';
import { databaseController } from './database/controller';
import { etcdClusterController } from './etcd/controller';
import { memcachedController } from './memcached/controller';
import { applicationController, webAppController } from './webapp/controller';

/**
 * Every controller the kit's own image (`DEFAULT_IMAGE`) runs, by the name `--controllers` uses:
 * the one list the image's entry point, `--help` and the Operator construct's checks read.
 */
export const KIT_CONTROLLERS: readonly ControllerDeclaration[] = [
  memcachedController,
  etcdClusterController,
  cronTabController,
  applicationController,
  webAppController,
  databaseController,
];
