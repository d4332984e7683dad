import { LOCAL_STORAGE, localStorageObjects } from '../../../testing/node/local-storage';

describe("the real node's default StorageClass", () => {
  const objects = localStorageObjects('/run/node/local-path') as any[];
  const byKind = (kind: string) => objects.find((o) => o.kind === kind);

  test('is the one default class, provisioned by local-path-provisioner when a claim first has a pod', () => {
    expect(byKind('StorageClass')).toMatchObject({
      metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'rancher.io/local-path',
      volumeBindingMode: 'WaitForFirstConsumer',
      reclaimPolicy: 'Delete',
    });
  });

  test("puts every volume under the node's own directory, made by a helper of the node's image only", () => {
    const data = byKind('ConfigMap').data as Record<string, string>;
    expect(JSON.parse(data['config.json']!)).toEqual({
      nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: ['/run/node/local-path'] }],
    });
    expect(data.setup).toContain('mkdir -m 0777 -p "$VOL_DIR"');
    expect(data.teardown).toContain('rm -rf "$VOL_DIR"');
    const pod = JSON.parse(data['helperPod.yaml']!);
    expect(pod.spec.containers.map((c: any) => [c.image, c.imagePullPolicy])).toEqual([
      [LOCAL_STORAGE.helperImage, 'IfNotPresent'],
    ]);
    expect(
      objects.every(
        (o) => o.kind === 'StorageClass' || o.kind === 'Namespace' || o.metadata.namespace === LOCAL_STORAGE.namespace,
      ),
    ).toBe(true);
  });
});
