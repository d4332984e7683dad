import type { k8s } from 'cdk8s-plus-27';
import { FORCE_NEW_CLUSTER_ENV, FORCED_MEMBER_ANNOTATION, FORCED_POD_ANNOTATION } from './quorum-recovery-names';
import type { EtcdTopology } from './topology';

/**
 * The ConfigMap each member reads when it starts (etcd takes ETCD_* variables as flags): a member
 * added to a running cluster starts with `existing` and the member list it was added to. While a
 * quorum recovery forces a new cluster, the flag is here too — etcd ignores it on a member without
 * a write-ahead log, so only the survivor acts on it — with the member and pod it started from.
 */
export function membersConfigMapProps(metadata: k8s.ObjectMeta, topology: EtcdTopology): k8s.KubeConfigMapProps {
  const forced = topology.forcedStart;
  return {
    metadata: forced
      ? {
          ...metadata,
          annotations: { [FORCED_MEMBER_ANNOTATION]: forced.member, [FORCED_POD_ANNOTATION]: forced.podUID },
        }
      : metadata,
    data: {
      ETCD_INITIAL_CLUSTER: topology.initialCluster,
      ETCD_INITIAL_CLUSTER_STATE: topology.clusterState,
      ...(forced ? { [FORCE_NEW_CLUSTER_ENV]: 'true' } : {}),
    },
  };
}
