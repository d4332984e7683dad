/**
 * `cdk8s-operator-kit diff`: what the reconciler of the given controllers would change in a live
 * cluster for a resource — per child created, changed, held (it waits for a child not ready
 * yet, see `waitsFor`), pruned or unchanged — computed with a
 * server-side apply dry run (`dryRun=All`), so defaults and admission are the API server's own.
 * It writes nothing. Exit codes as `kubectl diff`: 0 no differences, 1 differences, >1 an error.
 */
import { stringify } from 'yaml';
import type { ControllerDeclaration } from '../constructs/core/controller-declaration';
import type { CustomResourceObject, KubeObject, ResourceType } from '../constructs/contract';
import {
  ChildMap,
  childKey,
  claimTemplateChanges,
  growthNote,
  shrinkRefusal,
  waitingOn,
  withCurrentClaimSizes,
} from '../constructs/contract';
import { isInvalid, isNotFound, type KubeClient, changeableFields } from '../operator/runtime/client';
import { renderChildrenWithWaits, withRefusalHint } from '../operator/runtime/children';
import { controllerNamed, controllerOf, ownedType, RenderError } from './render';
import { type ClusterCrds, getAsNewCode } from './served-version';

/** One child's fate. */
export interface ChildDiff {
  readonly verb: 'created' | 'changed' | 'held' | 'pruned' | 'unchanged' | 'refused';
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  /** For `changed` (and `held`, of a child that exists): a unified diff of the object as it is and as it would be. */
  readonly diff?: string;
  /** For `held`: what it waits for, e.g. `Job migrate (1 running, 0 succeeded, 0 failed)`. */
  readonly waitsFor?: string;
  /** For `refused`: the API server's words, and the way through (as the resource's status says it). */
  readonly refusal?: string;
  /** For `changed`: what is done apart from the apply, e.g. a StatefulSet's claims grown (see `growthNote`). */
  readonly note?: string;
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
      `${ref}: give <kind>/<name> of a kind these controllers reconcile (${controllers.map((c) => c.for.singular).join(', ')})`,
    );
  }
  // At a version the cluster serves, converted by these controllers' own code: a new API
  // version is previewed before its CRD (or its conversion webhook) is in the cluster.
  return getAsNewCode(cluster, decl, name, namespace);
}

/** What the reconciler would do to the children of one (live) resource. */
export async function diffResource(
  client: KubeClient,
  controllers: readonly ControllerDeclaration[],
  resource: CustomResourceObject,
): Promise<ChildDiff[]> {
  const decl = controllerOf(controllers, resource, `${resource.kind ?? ''} ${resource.metadata.name}`);
  const out: ChildDiff[] = [];
  // As the reconciler renders it: with the facts an external step left, read from the children.
  const children = decl.observeExternal ? await ownedChildren(client, decl, resource) : undefined;
  const { objects: rendered, waits } = renderChildrenWithWaits(decl, resource, children);
  // The children as they are, read in the rendered order: what a child waits for comes first.
  const live = new Map<string, KubeObject | undefined>();
  for (const desired of rendered) {
    const type = ownedType(decl, desired.kind);
    const namespace = desired.metadata.namespace ?? resource.metadata.namespace;
    const child = { ...desired, metadata: { ...desired.metadata, namespace } };
    const where = { kind: type.kind, namespace, name: child.metadata.name ?? '' };
    const key = childKey(type.kind, where.name);
    const current = await getIfExists(client, type, where.name, namespace);
    live.set(key, current);
    // As the reconciler: a child waiting for one not ready yet is not applied.
    const waiting = waitingOn(waits.get(key) ?? [], (k) => live.get(k));
    const held = waiting.length ? { verb: 'held' as const, ...where, waitsFor: waiting.join(', ') } : undefined;
    if (!current) {
      out.push(held ?? { verb: 'created', ...where });
      continue;
    }
    out.push(await diffExisting(client, type, child, current, held));
  }
  return [...out, ...(await prunedChildren(client, decl, resource, rendered))];
}

const NO_CLAIM_CHANGES = { grown: [], shrunk: [] } as const;

/**
 * What the reconciler would do to a child that exists: refused, unchanged, or changed (or held),
 * with the diff of the API server's dry run. A StatefulSet's claims grow apart from its apply, as
 * the reconciler grows them (the rest is dry-run with the claims' sizes as they are); a shrink is refused.
 */
async function diffExisting(
  client: KubeClient,
  type: ResourceType,
  child: KubeObject,
  current: KubeObject,
  held: ChildDiff | undefined,
): Promise<ChildDiff> {
  const where = { kind: type.kind, namespace: child.metadata.namespace, name: child.metadata.name ?? '' };
  const { grown, shrunk } = type.kind === 'StatefulSet' ? claimTemplateChanges(current, child) : NO_CLAIM_CHANGES;
  const [shrink] = shrunk;
  if (shrink) return { verb: 'refused', ...where, refusal: shrinkRefusal(where.name, shrink) };
  const after = await dryRunOrRefusal(client, type, grown.length ? withCurrentClaimSizes(child, current) : child);
  // Shown among the others, as the reconciler goes on with them: never an abort.
  if (typeof after === 'string') return { verb: 'refused', ...where, refusal: after };
  const [a, b] = [comparable(current), comparable(after)];
  if (a === b && !grown.length) return { verb: 'unchanged', ...where };
  return {
    ...(held ?? { verb: 'changed', ...where }),
    ...(grown.length ? { note: growthNote(grown) } : {}),
    ...(a === b ? {} : { diff: unifiedDiff(a, b) }),
  };
}

/** The child as the API server would store it, or (a string) its refusal with the way through. */
async function dryRunOrRefusal(
  client: KubeClient,
  type: ResourceType,
  child: KubeObject,
): Promise<KubeObject | string> {
  try {
    return await client.apply(type, child, { dryRun: true });
  } catch (err) {
    if (!isInvalid(err)) throw err;
    return withRefusalHint(err.message, {
      kind: type.kind,
      name: child.metadata.name ?? '',
      namespace: child.metadata.namespace,
      exists: true,
    });
  }
}

async function getIfExists(
  client: KubeClient,
  type: ResourceType,
  name: string,
  namespace: string | undefined,
): Promise<KubeObject | undefined> {
  try {
    return await client.get(type, name, namespace);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
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

/** Owned children of a kind it deletes that it no longer renders: pruned, as the reconciler would. */
async function prunedChildren(
  client: KubeClient,
  decl: ControllerDeclaration,
  resource: CustomResourceObject,
  rendered: readonly KubeObject[],
): Promise<ChildDiff[]> {
  const out: ChildDiff[] = [];
  for (const type of decl.deletes ?? []) {
    const list = await client.list(type, resource.metadata.namespace);
    for (const o of list.items) {
      const ours = o.metadata.ownerReferences?.some((r) => r.controller && r.uid === resource.metadata.uid);
      const kept = rendered.some((d) => d.kind === type.kind && d.metadata.name === o.metadata.name);
      if (ours && !kept)
        out.push({ verb: 'pruned', kind: type.kind, namespace: o.metadata.namespace, name: o.metadata.name ?? '' });
    }
  }
  return out;
}

/** The report `diff` prints: one line per child, and each change as a unified diff. */
export function diffReport(resource: KubeObject, children: readonly ChildDiff[]): string {
  const lines = [`# ${resource.kind} ${resource.metadata.namespace ?? ''}/${resource.metadata.name ?? ''}`];
  for (const c of children) {
    const waits = c.waitsFor ? ` (waits for ${c.waitsFor})` : '';
    lines.push(`${c.verb.padEnd(9)} ${c.kind} ${c.namespace ? `${c.namespace}/` : ''}${c.name}${waits}`);
    if (c.refusal) lines.push(`  ${c.refusal}`);
    if (c.note) lines.push(`  ${c.note}`);
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
