/**
 * `cdk8s-operator-kit diff`: what the reconciler of the given controllers would change in a live
 * cluster for a resource — per child created, changed, held (it waits for a child not ready
 * yet, see `waitsFor`), pruned or unchanged — computed with a
 * server-side apply dry run (`dryRun=All`), so defaults and admission are the API server's own.
 * It writes nothing. Exit codes as `kubectl diff`: 0 no differences, 1 differences, >1 an error.
 */
import { stringify } from 'yaml';
import type { ControllerDeclaration } from '../constructs/core/controller-declaration';
import type { CustomResourceObject, KubeObject } from '../constructs/contract';
import { ChildMap, childKey, growthNote } from '../constructs/contract';
import { type KubeClient, changeableFields } from '../operator/runtime/client';
import { type ChildPreview, previewResource } from './preview';
import { type ExternalPreview, listForPreview } from '../operator/runtime/plan';
import { controllerNamed, controllerOf, RenderError } from './render';
import { type ClusterCrds, getAsNewCode } from './served-version';

/** One child's fate. */
export interface ChildDiff {
  /**
   * `deleted`: a pod a StatefulSet's rollout is stuck behind (or one the external step restarts),
   * which the reconciler deletes. `labelled`: a pod whose labels the external step asks to change. `external`: the write the kind's external step would make to its
   * outside system now (`kind` the system, `name` its target); `unknown`: that step could not be
   * previewed from here (`note` says why).
   */
  readonly verb:
    | 'created'
    | 'changed'
    | 'held'
    | 'pruned'
    | 'unchanged'
    | 'refused'
    | 'deleted'
    | 'labelled'
    | 'external'
    | 'unknown';
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  /** For `changed` (and `held`, of a child that exists): a unified diff of the object as it is and as it would be. */
  readonly diff?: string;
  /** For `held`: what it waits for, e.g. `Job migrate (1 running, 0 succeeded, 0 failed)`. */
  readonly waitsFor?: string;
  /** For `refused`: the API server's words, and the way through (as the resource's status says it). */
  readonly refusal?: string;
  /** What is done apart from the apply (a StatefulSet's claims grown, see `growthNote`), or why a child is held or a pod deleted. */
  readonly note?: string;
  /** For `changed`: the reconciler's writes of it other than its apply (each claim grown, the StatefulSet made again). */
  readonly writes?: readonly string[];
}

/** The live resource a `kind/name` names, through the controllers that reconcile it. */
export async function liveResource(
  cluster: ClusterCrds,
  controllers: readonly ControllerDeclaration[],
  ref: string,
  namespace: string,
): Promise<CustomResourceObject> {
  const [kind, name] = ref.split('/');
  const decl = controllerNamed(controllers, kind ?? '');
  if (!decl || !name) {
    throw new RenderError(
      `${ref}: give <kind>/<name> of a kind these controllers reconcile (${controllers.map((c) => c.for.singular).join(', ')}); for a kind of your own, name the module that exports its controller: --controllers controllers.ts`,
    );
  }
  // At a version the cluster serves, converted by these controllers' own code: a new API
  // version is previewed before its CRD (or its conversion webhook) is in the cluster.
  return getAsNewCode(cluster, decl, name, namespace);
}

/**
 * What the reconciler would do to the children of one (live) resource: its own plan
 * (`previewResource`), over the objects of its namespace listed once per type.
 */
export async function diffResource(
  client: KubeClient,
  controllers: readonly ControllerDeclaration[],
  resource: CustomResourceObject,
): Promise<ChildDiff[]> {
  const decl = controllerOf(controllers, resource, `${resource.kind ?? ''} ${resource.metadata.name}`);
  const reads = await listForPreview(
    decl,
    async (type) => (await client.list(type, type.namespaced ? resource.metadata.namespace : undefined)).items,
  );
  const preview = await previewResource(client, decl, resource, reads);
  const namespace = resource.metadata.namespace;
  if (preview.notOwned)
    return preview.notOwned.map(({ key, reason }) => ({
      verb: 'refused',
      kind: key.slice(0, key.indexOf('/')),
      namespace,
      name: key.slice(key.indexOf('/') + 1),
      refusal: `${reason}: the reconciler never takes it over, and writes none of this resource's children while it stands`,
    }));
  const others = preview.writes.flatMap((w): ChildDiff[] => {
    if (w.type === 'PruneChild') return [{ verb: 'pruned', kind: w.kind, namespace, name: w.name }];
    if (w.type === 'DeleteStuckPod' || w.type === 'RestartPod' || w.type === 'DeleteClaim')
      return [{ verb: 'deleted', kind: w.kind, namespace, name: w.name, note: w.reason }];
    if (w.type === 'LabelPod') return [{ verb: 'labelled', kind: w.kind, namespace, name: w.name, note: w.reason }];
    return [];
  });
  return [...preview.children.map(childDiff), ...others, ...externalDiffs(decl.name, preview.external)];
}

/** The external step's write, or why it could not be previewed. */
function externalDiffs(controller: string, external: ExternalPreview | undefined): ChildDiff[] {
  if (!external) return [];
  const writes = external.writes.map((w): ChildDiff => ({
    verb: 'external',
    kind: w.system,
    name: w.target,
    note: `${w.action}: ${w.reason}`,
  }));
  const unknown: ChildDiff[] = external.unavailable
    ? [{ verb: 'unknown', kind: 'external step', name: controller, note: `not previewed: ${external.unavailable}` }]
    : [];
  return [...writes, ...unknown];
}

/** One child's line of the report, from its fate in the reconciler's plan. */
function childDiff(c: ChildPreview): ChildDiff {
  const where = { kind: c.kind, namespace: c.namespace, name: c.name };
  if (c.verb === 'refused') return { verb: 'refused', ...where, refusal: c.refusal };
  if (c.verb === 'unchanged' || c.verb === 'created') return { verb: c.verb, ...where };
  const [a, b] = c.current && c.after ? [comparable(c.current), comparable(c.after)] : ['', ''];
  // An apply whose dry run changes nothing of what is compared (the API server's defaults) is no change.
  if (c.verb === 'changed' && a === b && !c.grown) return { verb: 'unchanged', ...where };
  const writes = c.writes
    .filter((w) => w.type !== 'ApplyChild')
    .map((w) => `${w.type} ${w.kind} ${w.name}: ${w.reason}`);
  const note = c.grown ? growthNote(c.grown) : c.heldBecause;
  return {
    verb: c.verb,
    ...where,
    ...(c.waitsFor ? { waitsFor: c.waitsFor } : {}),
    ...(note ? { note } : {}),
    ...(writes.length ? { writes } : {}),
    ...(a === b ? {} : { diff: unifiedDiff(a, b) }),
  };
}

/** The resource's children as they are: the objects of the kinds it owns that it controls. */
export async function ownedChildren(
  client: KubeClient,
  decl: ControllerDeclaration,
  resource: CustomResourceObject,
): Promise<ChildMap> {
  const children = new ChildMap();
  for (const type of decl.owns ?? []) {
    for (const o of (await client.list(type, resource.metadata.namespace)).items) {
      if (o.metadata.ownerReferences?.some((r) => r.controller && r.uid === resource.metadata.uid))
        children.set(childKey(type.kind, o.metadata.name ?? ''), o);
    }
  }
  return children;
}

/** The report `diff` prints: one line per child, and each change as a unified diff. */
export function diffReport(resource: KubeObject, children: readonly ChildDiff[]): string {
  const lines = [`# ${resource.kind} ${resource.metadata.namespace ?? ''}/${resource.metadata.name ?? ''}`];
  for (const c of children) {
    const waits = c.waitsFor ? ` (waits for ${c.waitsFor})` : '';
    lines.push(`${c.verb.padEnd(9)} ${c.kind} ${c.namespace ? `${c.namespace}/` : ''}${c.name}${waits}`);
    if (c.refusal) lines.push(`  ${c.refusal}`);
    if (c.note) lines.push(`  ${c.note}`);
    for (const w of c.writes ?? []) lines.push(`  ${w}`);
    if (c.diff) lines.push(c.diff);
  }
  return `${lines.join('\n')}\n`;
}

/** An object as YAML without what changes on every write (and is not ours to decide). */
function comparable(o: KubeObject): string {
  return stringify(changeableFields(o), { sortMapEntries: true });
}

/** A unified diff (no context limit trimming beyond 3 lines) of two texts, line by line. */
// eslint-disable-next-line complexity -- one pass over the edit script: a branch per kind of line and per hunk boundary, read best in one place
export function unifiedDiff(before: string, after: string): string {
  const a = before.split('\n');
  const b = after.split('\n');
  // Longest common subsequence lengths of the suffixes a[i..] and b[j..].
  const width = b.length + 1;
  const table = new Int32Array((a.length + 1) * width);
  const lcs = (i: number, j: number) => table[i * width + j] ?? 0;
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      table[i * width + j] = a[i] === b[j] ? lcs(i + 1, j + 1) + 1 : Math.max(lcs(i + 1, j), lcs(i, j + 1));
  const ops: { sign: ' ' | '-' | '+'; line: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      ops.push({ sign: ' ', line: a[i] ?? '' });
      i++;
      j++;
    } else if (i < a.length && (j >= b.length || lcs(i + 1, j) >= lcs(i, j + 1))) {
      // Removals first, as diff(1) writes them.
      ops.push({ sign: '-', line: a[i] ?? '' });
      i++;
    } else {
      ops.push({ sign: '+', line: b[j] ?? '' });
      j++;
    }
  }
  // Changed lines with 3 lines of context around them.
  const keep = ops.map((_op, k) => ops.slice(Math.max(0, k - 3), k + 4).some((o) => o.sign !== ' '));
  const out: string[] = ['--- live', '+++ after reconcile'];
  ops.forEach((op, k) => {
    if (keep[k]) out.push(`${op.sign}${op.line}`);
    else if (keep[k - 1]) out.push('@@');
  });
  // A separator only between runs, not after the last.
  while (out.at(-1) === '@@') out.pop();
  return out.join('\n');
}
