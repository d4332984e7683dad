/** The names a user and the members' ConfigMap use for a quorum recovery (quorum-recovery.ts): pure, for the render too. */

/** The annotation by which a user chooses to recover a cluster that lost its quorum from one surviving member. */
export const RECOVER_FROM_ANNOTATION = 'etcd.database.coreos.com/recover-from';

/** On the members' ConfigMap while a recovery forces a new cluster: the member it starts from. */
export const FORCED_MEMBER_ANNOTATION = 'etcd.database.coreos.com/force-new-cluster-member';

/** On the members' ConfigMap with it: the uid of that member's pod when the recovery began (the one to restart). */
export const FORCED_POD_ANNOTATION = 'etcd.database.coreos.com/force-new-cluster-pod';

/** The variable etcd reads as `--force-new-cluster`: it acts only on a member that has a write-ahead log. */
export const FORCE_NEW_CLUSTER_ENV = 'ETCD_FORCE_NEW_CLUSTER';
