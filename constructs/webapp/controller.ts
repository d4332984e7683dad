import { BuiltinTypes, ControllerDeclaration } from '../core/controller';
import { applicationKind, webAppKind } from './api';

const children = {
  owns: [BuiltinTypes.Deployment, BuiltinTypes.Service, BuiltinTypes.Ingress],
  // An Ingress is removed when the spec stops asking for one.
  deletes: [BuiltinTypes.Ingress],
};

/** The application controller (seed 002's Application). */
export const applicationController: ControllerDeclaration = { name: 'application', for: applicationKind, ...children };

/** The webapp controller (seed 001's WebApp): the same reconcile path as application. */
export const webAppController: ControllerDeclaration = { name: 'webapp', for: webAppKind, ...children };
