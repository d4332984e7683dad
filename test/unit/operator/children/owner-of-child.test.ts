/**
 * Which resource a failure Event concerns, through the owner references of the cached children:
 * what lets `constructController` report why a user's resource is not ready with no naming rule.
 */
import { customResourceType, type KubeObject } from '../../../../constructs/contract';
import { CustomResourceKind, t } from '../../../../constructs';
import type { Informer } from '../../../../operator/runtime/cache/informer';
import { ownerByReferences } from '../../../../operator/runtime/children/owner-of-child';

const kind = new CustomResourceKind({
  group: 'sites.example.com',
  kind: 'Site',
  versions: ['v1'],
  description: 'A site.',
  spec: t.object({}),
  status: t.object({}),
});
const type = customResourceType(kind);

function owned(by: string, kindName = 'Site', apiVersion = 'sites.example.com/v1') {
  return [{ apiVersion, kind: kindName, name: by, uid: `uid-${by}`, controller: true }];
}

/** An informer's cache, as far as the resolver reads it. */
function cache(objects: KubeObject[]): { informer: Informer } {
  const key = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;
  const informer = {
    get: (k: string) => objects.find((o) => key(o) === k),
    list: (namespace?: string) => objects.filter((o) => o.metadata.namespace === namespace),
  };
  return { informer: informer as unknown as Informer };
}

const ownerOf = ownerByReferences(
  type,
  new Map([
    [
      'Deployment',
      cache([
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'web', namespace: 'a', ownerReferences: owned('blog') },
        },
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'other', namespace: 'a', ownerReferences: owned('x', 'Shop', 'shops.example.com/v1') },
        },
      ]),
    ],
    [
      'StatefulSet',
      cache([
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          metadata: { name: 'db', namespace: 'a', ownerReferences: owned('blog') },
          spec: { volumeClaimTemplates: [{ metadata: { name: 'data' } }] },
        },
      ]),
    ],
  ]),
);

test.each([
  ['a child itself', { kind: 'StatefulSet', namespace: 'a', name: 'db' }, 'blog'],
  ['the ReplicaSet of a child Deployment', { kind: 'ReplicaSet', namespace: 'a', name: 'web-7d9c5b6f4' }, 'blog'],
  ['a claim of a child StatefulSet', { kind: 'PersistentVolumeClaim', namespace: 'a', name: 'data-db-2' }, 'blog'],
  [
    'a claim of no child StatefulSet',
    { kind: 'PersistentVolumeClaim', namespace: 'a', name: 'data-cache-0' },
    undefined,
  ],
  ['a child of another kind of resource', { kind: 'ReplicaSet', namespace: 'a', name: 'other-5f6d8' }, undefined],
  ['the same name in another namespace', { kind: 'StatefulSet', namespace: 'b', name: 'db' }, undefined],
  ['a kind it does not own', { kind: 'Job', namespace: 'a', name: 'db' }, undefined],
])('%s', (_what, involved, expected) => {
  expect(ownerOf(involved)).toBe(expected);
});
