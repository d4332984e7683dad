/**
 * One render path: what the reconciler applies (reconcile/steps.ts `renderDesired`, through its
 * render cache) and what `render`, `diff` and `plan` show (children/render.ts
 * `renderChildrenWithWaits`) are the same children with the same waits, for every kit kind's seed
 * sample and for a kind written with cdk8s-plus (examples/static-site).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ChildMap, type ControllerDeclaration } from '../../../../constructs/contract';
import { KIT_CONTROLLERS } from '../../../../constructs/kit-controllers';
import { staticSiteController } from '../../../../examples/static-site/static-site';
import { RenderCache, renderChildrenWithWaits } from '../../../../operator/runtime/children';
import type { Resource } from '../../../../operator/runtime/reconcile/controller-parts';
import type { RenderedChildren } from '../../../../constructs/contract/render';
import { renderDesired } from '../../../../operator/runtime/reconcile/steps';

const SAMPLES = path.resolve(__dirname, '..', '..', '..', '..', 'dist', 'samples');

/** The seed samples, as cluster objects of a namespace (a uid and generation, as the API server gives them). */
function samples(): Resource[] {
  return fs
    .readdirSync(SAMPLES)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseAllDocuments(fs.readFileSync(path.join(SAMPLES, f), 'utf8')).map((d) => d.toJS() as Resource))
    .filter((o) => o.kind !== undefined)
    .map((o, i) => ({
      ...o,
      metadata: { ...o.metadata, namespace: 'shop', uid: `uid-${String(i)}`, generation: 1, resourceVersion: '7' },
    }));
}

const staticSite: Resource = {
  apiVersion: 'sites.example.com/v1alpha1',
  kind: 'StaticSite',
  metadata: { name: 'docs', namespace: 'shop', uid: 'uid-site', generation: 1, resourceVersion: '3' },
  spec: { pages: { 'index.html': '<h1>Hi</h1>' }, replicas: 2, host: 'docs.example.com' },
};

/** Every declaration with the resources of its kind it is rendered for. */
function cases(): [string, ControllerDeclaration, Resource][] {
  const all = samples();
  const kitCases = KIT_CONTROLLERS.flatMap((decl) =>
    all
      .filter((o) => o.kind === decl.for.kind && (o.apiVersion ?? '').startsWith(`${decl.for.group}/`))
      .map((o): [string, ControllerDeclaration, Resource] => [`${decl.name}: ${o.metadata.name ?? ''}`, decl, o]),
  );
  return [...kitCases, ['static-site (cdk8s-plus): docs', staticSiteController as ControllerDeclaration, staticSite]];
}

const kindsCovered = new Set(cases().map(([, decl]) => decl.name));

test('every kit controller that renders children has a seed sample here', () => {
  const rendering = KIT_CONTROLLERS.filter((d) => d.render !== undefined).map((d) => d.name);
  expect(rendering.filter((name) => !kindsCovered.has(name))).toEqual([]);
});

test.each(cases())(
  '%s: the reconciler and the commands render the same children and waits',
  (_name, decl, resource) => {
    const forCommands = renderChildrenWithWaits(decl, resource);
    const external = decl.observeExternal?.(resource, new ChildMap());
    const renders = new RenderCache<RenderedChildren>(1 << 20);
    const key = `shop/${resource.metadata.name ?? ''}`;
    const forReconciler = renderDesired({ decl, renders }, { key, resource }, external);
    // None reads its status but the fields it names (a restore's conditions, until Restored; a
    // listing's backupsListedFrom): one that read it all would be reconciled again at each of our
    // status writes, to render with it. Those writes move the counts and the phase.
    // Not the status as a whole: a field no render names changes nothing.
    expect(renders.statusChanged(key, {}, { anyOtherField: 1 })).toBe(false);
    const written = { phase: 'Running', replicas: 1, readyReplicas: 1, observedGeneration: 1 };
    expect(renders.statusChanged(key, {}, written)).toBe(false);
    expect(forCommands.objects.length).toBeGreaterThan(0);
    expect(forReconciler.objects).toEqual(forCommands.objects);
    expect([...forReconciler.waits]).toEqual([...forCommands.waits]);
    // Owned as the runtime owns children: by the resource, by its uid (data kept past a delete, as
    // a Database's retention ConfigMap, is owned by nothing or by a sibling).
    const controlled = forCommands.objects.filter((c) =>
      c.metadata.ownerReferences?.some((o) => o.controller && o.uid === resource.metadata.uid),
    );
    expect(controlled.length).toBeGreaterThan(0);
    for (const child of controlled)
      expect(child.metadata.ownerReferences).toContainEqual(
        expect.objectContaining({ kind: resource.kind, name: resource.metadata.name, controller: true }),
      );
  },
);
