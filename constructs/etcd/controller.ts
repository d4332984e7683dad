import { BuiltinTypes, ControllerDeclaration } from '../core/controller';
import { etcdClusterKind } from './api';

/**
 * The etcdcluster controller: an EtcdCluster becomes a headless peer Service, a client Service,
 * a StatefulSet and a PodDisruptionBudget. It reads Pods for status, and the Warning Events that
 * say a member's pod or claim cannot be made (for `Degraded`). It never deletes
 * PersistentVolumeClaims: member data outlives scale-downs and the EtcdCluster itself.
 */
export const etcdClusterController: ControllerDeclaration = {
  name: 'etcdcluster',
  for: etcdClusterKind,
  owns: [BuiltinTypes.Service, BuiltinTypes.StatefulSet, BuiltinTypes.PodDisruptionBudget],
  reads: [BuiltinTypes.Pod, BuiltinTypes.CoreEvent],
};
