import { BuiltinTypes, ControllerDeclaration } from '../core/controller';
import { databaseKind } from './api';

/**
 * The database controller. It applies Services, the StatefulSet, the retention ConfigMap, the
 * backup claim and CronJob; deletes only the backup CronJob (when backups are switched off);
 * creates the credentials Secret once and can neither read nor change any Secret. It has no
 * delete right on claims: data goes only through the StatefulSet's retention policy or owner
 * references.
 */
export const databaseController: ControllerDeclaration = {
  name: 'database',
  for: databaseKind,
  owns: [BuiltinTypes.ConfigMap, BuiltinTypes.Service, BuiltinTypes.StatefulSet, BuiltinTypes.CronJob, BuiltinTypes.PersistentVolumeClaim],
  deletes: [BuiltinTypes.CronJob],
  // The Warning Events that say its pod or claims cannot be made, for `Degraded`.
  reads: [BuiltinTypes.CoreEvent],
  creates: [BuiltinTypes.Secret],
};
