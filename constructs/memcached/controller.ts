import { BuiltinTypes, ControllerDeclaration } from '../core/controller';
import { memcachedKind } from './api';

/**
 * The Memcached controller: reconciles a Memcached into one Deployment, and reads Pods to list
 * their names in status. It needs no finalizer: its only children are owner-referenced and
 * garbage-collected.
 */
export const memcachedController: ControllerDeclaration = {
  name: 'memcached',
  for: memcachedKind,
  owns: [BuiltinTypes.Deployment],
  reads: [BuiltinTypes.Pod],
};
