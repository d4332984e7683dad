/**
 * `plan`, `diff` and `render` render a kind with an `external` step (the EtcdCluster's membership)
 * from the facts its children show, read-only, so what they print is what the reconciler writes.
 */
import { ChildMap, childKey, type KubeObject } from '../../../constructs/contract';
import { etcdClusterController } from '../../../constructs/etcd/controller';
import { membersConfigMapName } from '../../../constructs/etcd/topology';
import { renderDocuments } from '../../../command/render';
import { externalFactsUnknown, renderChildrenWithWaits } from '../../../operator/runtime/children/render';

const cluster = {
  apiVersion: 'etcd.database.coreos.com/v1alpha1',
  kind: 'EtcdCluster',
  metadata: { name: 'e', namespace: 'db', uid: 'u-e', generation: 2 },
  spec: { replicas: 4, storage: '1Gi', version: '3.5.21' },
};

/** The children as the reconciler left them mid-scale: 3 members running, a 4th added as `existing`. */
function childrenMidScale(): ChildMap {
  const rendered = renderChildrenWithWaits(etcdClusterController, cluster).objects;
  const children = new ChildMap();
  for (const o of rendered) {
    const live = structuredClone(o) as KubeObject & { spec?: any; data?: Record<string, string> };
    if (o.kind === 'StatefulSet') live.spec.replicas = 4;
    if (o.kind === 'ConfigMap' && o.metadata.name === membersConfigMapName('e'))
      live.data = {
        ...live.data,
        ETCD_INITIAL_CLUSTER_STATE: 'existing',
        ETCD_INITIAL_CLUSTER: 'e-0=http://a:2380,e-1=http://b:2380,e-2=http://c:2380,e-3=http://d:2380',
      };
    children.set(childKey(o.kind ?? '', o.metadata.name ?? ''), live);
  }
  return children;
}

describe('observeExternal: the facts an external step left, read from the children', () => {
  test('an EtcdCluster mid-scale renders the topology its children show, not the bootstrap one', () => {
    const children = childrenMidScale();
    const { objects } = renderChildrenWithWaits(etcdClusterController, cluster, children);
    const members = objects.find((o) => o.metadata.name === membersConfigMapName('e')) as unknown as {
      data: Record<string, string>;
    };
    expect(members.data.ETCD_INITIAL_CLUSTER_STATE).toBe('existing');
    expect(members.data.ETCD_INITIAL_CLUSTER).toContain('e-3=http://d:2380');
    const sts = objects.find((o) => o.kind === 'StatefulSet') as unknown as { spec: { replicas: number } };
    expect(sts.spec.replicas).toBe(4);
  });

  test('with no children (offline render), the bootstrap topology, as the reconciler makes a new cluster', () => {
    const { objects } = renderChildrenWithWaits(etcdClusterController, cluster);
    const members = objects.find((o) => o.metadata.name === membersConfigMapName('e')) as unknown as {
      data: Record<string, string>;
    };
    expect(members.data.ETCD_INITIAL_CLUSTER_STATE).toBe('new');
  });
});

describe('a declaration whose external facts cannot be read offline', () => {
  test('render says it rendered without them; the EtcdCluster, which reads them, says nothing', () => {
    const blind = { ...etcdClusterController, observeExternal: undefined };
    const out = renderDocuments([{ where: 'e', decl: blind as never, stored: cluster }]);
    expect(out).toContain(
      '# controller etcdcluster has an external step whose facts cannot be read offline: rendered without them',
    );
    expect(externalFactsUnknown(etcdClusterController)).toBeUndefined();
    expect(renderDocuments([{ where: 'e', decl: etcdClusterController as never, stored: cluster }])).not.toContain(
      'cannot be read offline',
    );
  });
});
