import { BuiltinTypes, ControllerDeclaration } from '../core/controller';
import { cronTabKind } from './api';

/** The crontab controller: a CronTab becomes one CronJob. */
export const cronTabController: ControllerDeclaration = {
  name: 'crontab',
  for: cronTabKind,
  owns: [BuiltinTypes.CronJob],
};
