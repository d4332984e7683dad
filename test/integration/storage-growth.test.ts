/**
 * A StatefulSet's storage grown for real (#68): a KeyValueStore (examples/key-value-store, written
 * with cdk8s-plus's typed objects) asks for larger volumes. Where the claims' StorageClass allows
 * expansion, its reconciler — run as its own ServiceAccount, with the RBAC its chart synthesized —
 * grows each claim, deletes the StatefulSet with its pods kept and makes it again; the store is not
 * Ready until every claim has the new size. Where the class does not allow it, nothing at all is
 * written and the status says what to do; a smaller size is refused up front. kwok completes a
 * resize as a CSI driver's resizer would (testing/kwok-volume-expansion-stages.yaml).
 */
import { keyValueStoreApp } from '../../examples/key-value-store/app';
import { EXPANDABLE_STORAGE_CLASS, RESIZE_HELD_ANNOTATION } from '../../testing/control-plane';
import { eventually, getJson, getJsonIfExists, kubectlOk, testWithNodes } from '../support/kube';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { controllersModule, runCommand } from '../support/controllers-module';
import { startExampleOperator } from '../support/example-operator';
import type { ReconcilerProcess } from '../support/reconciler';

jest.setTimeout(180_000);

let ns: string;
let reconciler: ReconcilerProcess;
let objects: any[];
const get = (kind: string, name: string) => getJsonIfExists(['get', kind, name, '-n', ns]);
const condition = (name: string, type: string) =>
  get('keyvaluestore', name)?.status?.conditions?.find((c: any) => c.type === type);

beforeAll(async () => {
  ({ ns, reconciler, objects } = await startExampleOperator({
    example: 'key-value-store',
    app: keyValueStoreApp,
    crd: 'keyvaluestores.kv.example.com',
    controller: 'keyvaluestore',
  }));
});

afterAll(async () => {
  expect((await reconciler?.stop())?.code).toBe(0);
});

const ROOT = path.resolve(__dirname, '..', '..');
const CONTROLLERS = path.join(ROOT, 'examples', 'key-value-store', 'key-value-store.ts');

/** `diff` of a KeyValueStore with this spec against the live one: exit code and report. */
function diffOf(name: string, spec: object): { code: number | null; out: string } {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-kvs-')), `${name}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify({ apiVersion: 'kv.example.com/v1alpha1', kind: 'KeyValueStore', metadata: { name }, spec }),
  );
  const r = runCommand(['diff', '--controllers', CONTROLLERS, '-n', ns, file]);
  return { code: r.status, out: r.stdout + r.stderr };
}

function store(name: string, spec: object): void {
  kubectlOk(['apply', '-n', ns, '--server-side', '--field-manager=test', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'kv.example.com/v1alpha1', kind: 'KeyValueStore', metadata: { name }, spec }),
  });
}

async function available(name: string): Promise<void> {
  await eventually(
    `${name}: Available=True and Ready=True`,
    () =>
      condition(name, 'Available')?.status === 'True' && condition(name, 'Ready')?.status === 'True' ? true : undefined,
    90_000,
    250,
    () => JSON.stringify(get('keyvaluestore', name)?.status?.conditions),
  );
}

/** The store's claims (`data-<name>-<i>`), by name: what each asks and has. */
function claims(name: string): Record<string, { asks: string; has?: string; uid: string }> {
  const items = getJson(['get', 'pvc', '-n', ns]).items.filter((c: any) => c.metadata.name.startsWith(`data-${name}-`));
  return Object.fromEntries(
    items.map((c: any) => [
      c.metadata.name,
      { asks: c.spec.resources.requests.storage, has: c.status?.capacity?.storage, uid: c.metadata.uid },
    ]),
  );
}

/** The store's Redis pods, by name: their uids (a pod made again has another). */
function podUids(name: string): Record<string, string> {
  const pods = getJson(['get', 'pods', '-n', ns, '-l', `app.kubernetes.io/instance=${name}`]).items;
  return Object.fromEntries(
    // The StatefulSet's pods, by their owner: a name ending in digits is no test — a ReplicaSet's
    // pod's random suffix can be all digits (a CI run's gateway pod was grows-gateway-bdfddf49b-74994).
    pods
      .filter((p: any) => p.metadata.ownerReferences?.some((r: any) => r.kind === 'StatefulSet' && r.controller))
      .map((p: any) => [p.metadata.name, p.metadata.uid]),
  );
}

function templateSize(name: string): string {
  return get('statefulset', name).spec.volumeClaimTemplates[0].spec.resources.requests.storage;
}

describe('growing a KeyValueStore’s storage', () => {
  test('its RBAC may patch claims, read StorageClasses and delete StatefulSets', () => {
    const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'key-value-store-manager-role');
    const verbsOf = (group: string, resource: string) =>
      role.rules.find((r: any) => r.apiGroups.includes(group) && r.resources.includes(resource))?.verbs;
    expect(verbsOf('storage.k8s.io', 'storageclasses')).toEqual(['get']);
    expect(verbsOf('', 'persistentvolumeclaims')).toEqual(['get', 'list', 'watch', 'patch']);
    expect(verbsOf('apps', 'statefulsets')).toContain('delete');
  });

  testWithNodes(
    'where the class allows expansion: claims grown 2Gi → 5Gi, the StatefulSet made again, no pod restarted, Ready only once every claim has 5Gi',
    async () => {
      const storage = { size: '2Gi', storageClassName: EXPANDABLE_STORAGE_CLASS };
      store('grows', { replicas: 2, storage });
      await available('grows');
      const before = { pods: podUids('grows'), statefulSet: get('statefulset', 'grows').metadata.uid };
      expect(Object.keys(before.pods).sort()).toEqual(['grows-0', 'grows-1']);
      expect(Object.values(claims('grows')).map((c) => c.has)).toEqual(['2Gi', '2Gi']);
      // The resizer is slow: each claim waits until the test lets it go.
      for (const claim of Object.keys(claims('grows')))
        kubectlOk(['annotate', 'pvc', claim, '-n', ns, `${RESIZE_HELD_ANNOTATION}=true`]);

      // Previewed first, as the reconciler will do it: the claims grow, nothing else of the StatefulSet changes.
      const preview = diffOf('grows', { replicas: 2, storage: { ...storage, size: '5Gi' } });
      expect(preview.code).toBe(1);
      expect(preview.out).toContain(`changed   StatefulSet ${ns}/grows\n  claims grow (data 2Gi → 5Gi): each patched`);
      expect(preview.out).not.toMatch(/refused/);
      // A new version of its controller whose claims ask 3Gi: plan says so, as a change.
      const plan = runCommand([
        'plan',
        '--kind',
        'KeyValueStore',
        '-n',
        ns,
        '-o',
        'json',
        '--controllers',
        controllersModule(`import { keyValueStoreController } from ${JSON.stringify(CONTROLLERS)};
export const controllers = [{
  ...keyValueStoreController,
  render: (scope: any, store: any, context: any) =>
    keyValueStoreController.render!(scope, { ...store, spec: { ...store.spec, storage: { ...store.spec.storage, size: '3Gi' } } }, context),
}];
`),
      ]);
      const planned = JSON.parse(plan.stdout);
      expect(planned.fieldChanges).toContainEqual({
        kind: 'StatefulSet',
        field: 'spec.volumeClaimTemplates[data].spec.resources.requests.storage',
        change: 'changed',
        count: 1,
      });
      expect(planned.children.refused).toBe(0);
      store('grows', { replicas: 2, storage: { ...storage, size: '5Gi' } });
      // Both claims asked for 5Gi, the StatefulSet made again with 5Gi — and not Ready while the volumes are 2Gi.
      await eventually('claims asking 5Gi and a new StatefulSet of 5Gi', () => {
        const now = Object.values(claims('grows'));
        const sts = get('statefulset', 'grows');
        return now.length === 2 && now.every((c) => c.asks === '5Gi') && sts && sts.metadata.uid !== before.statefulSet
          ? true
          : undefined;
      });
      expect(templateSize('grows')).toBe('5Gi');
      const progressing = await eventually('Progressing=True Resizing', () => {
        const c = condition('grows', 'Progressing');
        return c?.status === 'True' && c.reason === 'Resizing' ? c : undefined;
      });
      expect(progressing.message).toMatch(
        /^StatefulSet grows \(claim data-grows-0 has 2Gi of the 5Gi asked \(and 1 more\): its volume is being expanded\)/,
      );
      expect(condition('grows', 'Ready')?.status).toBe('False');
      expect(condition('grows', 'Available')?.status).toBe('False');

      kubectlOk(['annotate', 'pvc', 'data-grows-0', '-n', ns, `${RESIZE_HELD_ANNOTATION}-`]);
      await eventually('data-grows-0 at 5Gi', () =>
        claims('grows')['data-grows-0']?.has === '5Gi' ? true : undefined,
      );
      // One claim grown, one not: still not Ready.
      await eventually('Progressing naming data-grows-1', () =>
        /claim data-grows-1 has 2Gi of the 5Gi/.test(condition('grows', 'Progressing')?.message ?? '')
          ? true
          : undefined,
      );
      expect(condition('grows', 'Ready')?.status).toBe('False');

      kubectlOk(['annotate', 'pvc', 'data-grows-1', '-n', ns, `${RESIZE_HELD_ANNOTATION}-`]);
      await available('grows');
      expect(Object.values(claims('grows')).map((c) => c.has)).toEqual(['5Gi', '5Gi']);
      // The same pods, adopted by the StatefulSet made again: none restarted by the kit.
      expect(podUids('grows')).toEqual(before.pods);
      const events = getJson(['get', 'events.events.k8s.io', '-n', ns]).items.filter(
        (e: any) => e.regarding?.name === 'grows' && e.reason === 'StorageGrowing',
      );
      expect(events).toHaveLength(1);
      expect(events[0].note).toMatch(/data-grows-0, data-grows-1 to grow to 5Gi; StatefulSet grows is made again/);
    },
  );

  testWithNodes(
    'where the class does not allow expansion: nothing written, Stalled saying so and what to do; set back, it is Ready',
    async () => {
      // kwok's default class, as most clusters' defaults, does not allow expansion.
      store('fixed', { replicas: 1, storage: { size: '1Gi' }, seed: { a: '1' } });
      await available('fixed');
      const before = { statefulSet: get('statefulset', 'fixed').metadata.uid, claims: claims('fixed') };
      const configBefore = get('statefulset', 'fixed').metadata.resourceVersion;

      store('fixed', { replicas: 1, storage: { size: '3Gi' }, seed: { a: '1' } });
      const refused = await eventually('Available=False ChildRefused', () => {
        const c = condition('fixed', 'Available');
        return c?.reason === 'ChildRefused' ? c : undefined;
      });
      expect(refused.message).toMatch(
        /StatefulSet fixed: its claims would grow, but StorageClass kwok-volume does not allow volume expansion .*A cluster admin can set allowVolumeExpansion: true/,
      );
      expect(condition('fixed', 'Stalled')?.status).toBe('True');
      expect(condition('fixed', 'Ready')?.status).toBe('False');
      // Nothing written: the claims and the StatefulSet as they were.
      expect(claims('fixed')).toEqual(before.claims);
      expect(get('statefulset', 'fixed').metadata).toMatchObject({
        uid: before.statefulSet,
        resourceVersion: configBefore,
      });

      store('fixed', { replicas: 1, storage: { size: '1Gi' }, seed: { a: '1' } });
      await available('fixed');
      expect(get('statefulset', 'fixed').metadata.uid).toBe(before.statefulSet);
    },
  );

  testWithNodes('a smaller size is refused up front: a volume cannot shrink', async () => {
    const storage = { size: '2Gi', storageClassName: EXPANDABLE_STORAGE_CLASS };
    store('shrinks', { replicas: 1, storage });
    await available('shrinks');
    const before = claims('shrinks');
    const preview = diffOf('shrinks', { replicas: 1, storage: { ...storage, size: '1Gi' } });
    expect(preview.out).toContain(
      `refused   StatefulSet ${ns}/shrinks\n  StatefulSet shrinks: its claim template data would ask 1Gi`,
    );
    store('shrinks', { replicas: 1, storage: { ...storage, size: '1Gi' } });
    const refused = await eventually('Available=False ChildRefused', () => {
      const c = condition('shrinks', 'Available');
      return c?.reason === 'ChildRefused' ? c : undefined;
    });
    expect(refused.message).toMatch(
      /StatefulSet shrinks: its claim template data would ask 1Gi, less than the 2Gi it asks now: a volume cannot shrink/,
    );
    expect(condition('shrinks', 'Stalled')?.status).toBe('True');
    expect(claims('shrinks')).toEqual(before);
    expect(templateSize('shrinks')).toBe('2Gi');
  });

  testWithNodes(
    "another fixed field (the claims' class): refused with the way through, and that way (--cascade=orphan) works, no pod restarted",
    async () => {
      store('moved', { replicas: 2, storage: { size: '1Gi', storageClassName: EXPANDABLE_STORAGE_CLASS } });
      await available('moved');
      const before = { pods: podUids('moved'), statefulSet: get('statefulset', 'moved').metadata.uid };

      store('moved', { replicas: 2, storage: { size: '1Gi', storageClassName: 'kwok-volume' } });
      const refused = await eventually('Available=False ChildRefused', () => {
        const c = condition('moved', 'Available');
        return c?.reason === 'ChildRefused' ? c : undefined;
      });
      expect(refused.message).toContain('updates to statefulset spec for fields other than');
      const way = /\(kubectl delete statefulset moved -n \S+ --cascade=orphan\)/.exec(refused.message)?.[0];
      expect(way).toBe(`(kubectl delete statefulset moved -n ${ns} --cascade=orphan)`);

      // As the message says: delete it, keeping its pods.
      kubectlOk(way!.slice(1, -1).split(' ').slice(1));
      await eventually('a new StatefulSet asking kwok-volume', () => {
        const sts = get('statefulset', 'moved');
        return sts && sts.metadata.uid !== before.statefulSet ? true : undefined;
      });
      expect(get('statefulset', 'moved').spec.volumeClaimTemplates[0].spec.storageClassName).toBe('kwok-volume');
      await available('moved');
      expect(podUids('moved')).toEqual(before.pods);
    },
  );
});
