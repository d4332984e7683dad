/**
 * `cdk8s-operator-kit plan`: what the controllers of the code at hand (a new operator version)
 * would do to every existing resource of a kind — totals, the distinct field changes with how
 * many children each touches, and what the API server would refuse — before it rolls out.
 * Writes nothing. The load is bounded: one list per type, and a server-side apply dry run only
 * for a child the local change check (our field manager's managed fields) says would change.
 */
import type { ControllerDeclaration } from '../constructs/core/controller-declaration';
import type { CustomResourceObject, KubeObject, ResourceType } from '../constructs/contract';
import {
  ChildMap,
  claimTemplateChanges,
  shrinkRefusal,
  waitingOn,
  withCurrentClaimSizes,
} from '../constructs/contract';
import {
  ApiError,
  type KubeClient,
  needsApply,
  appliedFieldChanges,
  type FieldChange,
  fieldChanges,
} from '../operator/runtime/client';
import { notOwnedReason, renderChildrenWithWaits } from '../operator/runtime/children';
import { type CrdChange, crdChange, crdChangeReport, crdChanges } from './crd-change';
import { ClusterCrds, listAsNewCode, type ServedResources, withTypeMeta } from './served-version';
import { controllerNamed, ownedType, RenderError } from './render';

const NO_CLAIM_CHANGES = { grown: [], shrunk: [] } as const;

export interface PlanOptions {
  readonly kind: string;
  /** One namespace, or every namespace. */
  readonly namespace?: string;
  /** Dry runs in flight at once. @default 8 */
  readonly concurrency?: number;
  /** Called after each resource, for a progress bar. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** One child a new version would write. */
export interface ChildChange {
  /** `namespace/name` of the resource. */
  readonly resource: string;
  /** `Kind/name` of the child. */
  readonly child: string;
  readonly verb: 'created' | 'changed' | 'pruned';
  /** For `changed`: the fields of the reconciler's apply that change. */
  readonly fields: readonly FieldChange[];
}

/** What a new version would do. */
export interface Plan {
  readonly kind: string;
  readonly resources: number;
  /** `held`: children the reconciler would not apply yet, since they wait for one not ready (`waitsFor`). */
  readonly children: {
    unchanged: number;
    changed: number;
    created: number;
    held: number;
    pruned: number;
    refused: number;
  };
  /** Each distinct change of a field, with how many children it touches, most first. */
  readonly fieldChanges: readonly {
    kind: string;
    field: string;
    change: 'added' | 'removed' | 'changed';
    count: number;
  }[];
  /** Children the API server would refuse, with why. */
  readonly refused: readonly { resource: string; child: string; message: string }[];
  /** Each child that would be written (created, changed or pruned), with the fields of the reconciler's apply that change. */
  readonly changes: readonly ChildChange[];
  /** Requests made: lists and dry runs. */
  readonly requests: { lists: number; dryRuns: number };
  /** The version the cluster gave the resources in; the new code converted them from it. */
  readonly read: string;
  /** What applying the new code's CRD would change. */
  readonly crd: CrdChange;
  /** Resources whose spec the new schema refuses: they stay stored, but an update of them would be refused. */
  readonly invalid: readonly { resource: string; message: string }[];
}

export async function planKind(
  client: KubeClient,
  controllers: readonly ControllerDeclaration[],
  options: PlanOptions,
): Promise<Plan> {
  const decl = controllerNamed(controllers, options.kind);
  if (!decl)
    throw new RenderError(
      `no controller reconciles ${options.kind}; known: ${controllers.map((c) => c.for.kind).join(', ')}`,
    );
  const cluster = new ClusterCrds(client);
  const planner = new Planner(cluster, decl, options.namespace);
  const crd = crdChange(await cluster.of(decl), decl);
  const { resources, read } = await planner.resources();
  const byOwner = await planner.childrenByOwner();
  let done = 0;
  // A small pool of workers: dry runs in flight stay within the concurrency.
  const queue = [...resources];
  await Promise.all(
    Array.from({ length: Math.max(1, options.concurrency ?? 8) }, async () => {
      for (let r = queue.shift(); r; r = queue.shift()) {
        await planner.planResource(r, byOwner.get(r.metadata.uid ?? '') ?? new Map<string, KubeObject>());
        options.onProgress?.(++done, resources.length);
      }
    }),
  );
  return { ...planner.plan(resources.length), read, crd, invalid: invalidResources(decl, resources) };
}

/** Resources whose spec the new storage version's schema refuses: the API server would refuse an update of them. */
function invalidResources(
  decl: ControllerDeclaration,
  resources: readonly CustomResourceObject[],
): { resource: string; message: string }[] {
  return resources.flatMap((r) =>
    decl.for.specViolations(r.spec).map((message) => ({ resource: qualifiedName(r), message })),
  );
}

function qualifiedName(o: KubeObject): string {
  return `${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name ?? ''}`;
}

/** What one kind's plan counts as it goes: lists, dry runs, and what each child would do. */
class Planner {
  private readonly requests = { lists: 0, dryRuns: 0 };
  private readonly totals = { unchanged: 0, changed: 0, created: 0, held: 0, pruned: 0, refused: 0 };
  private readonly fieldCounts = new Map<string, number>();
  private readonly refused: { resource: string; child: string; message: string }[] = [];
  private readonly changes: ChildChange[] = [];
  private readonly deletable: ReadonlySet<string>;
  /**
   * Listed objects with no controller, by `namespace/Kind/name`: a child rendered without an owner
   * on purpose (a claim kept when its resource goes) is one of these, as the reconciler finds it.
   */
  private readonly uncontrolled = new Map<string, KubeObject>();

  private readonly client: KubeClient;

  constructor(
    private readonly cluster: ClusterCrds,
    private readonly decl: ControllerDeclaration,
    private readonly namespace: string | undefined,
  ) {
    this.client = cluster.client;
    this.deletable = new Set((decl.deletes ?? []).map((t) => t.kind));
  }

  /** The kind's resources, read at a version the cluster serves and converted as the new code would. */
  async resources(): Promise<ServedResources> {
    this.requests.lists++;
    return listAsNewCode(this.cluster, this.decl, this.namespace);
  }

  async list<T extends KubeObject>(type: ResourceType<T>): Promise<T[]> {
    this.requests.lists++;
    return withTypeMeta(type, (await this.client.list<T>(type, type.namespaced ? this.namespace : undefined)).items);
  }

  /** Every owned child, by its controller's uid and `Kind/name`: one list per type. */
  async childrenByOwner(): Promise<Map<string, Map<string, KubeObject>>> {
    const byOwner = new Map<string, Map<string, KubeObject>>();
    for (const type of this.decl.owns ?? []) {
      for (const o of await this.list(type)) {
        const owner = o.metadata.ownerReferences?.find((r) => r.controller)?.uid;
        if (!owner) {
          this.uncontrolled.set(`${o.metadata.namespace ?? ''}/${type.kind}/${o.metadata.name ?? ''}`, o);
          continue;
        }
        const children = byOwner.get(owner) ?? new Map<string, KubeObject>();
        children.set(`${type.kind}/${o.metadata.name ?? ''}`, o);
        byOwner.set(owner, children);
      }
    }
    return byOwner;
  }

  /** What the new version would do to one resource's children: create, change, keep, refuse, prune. */
  async planResource(resource: CustomResourceObject, owned: ReadonlyMap<string, KubeObject>): Promise<void> {
    // As the reconciler renders it: with the facts an external step left, read from the children.
    const { objects: rendered, waits } = renderChildrenWithWaits(this.decl, resource, new ChildMap(owned));
    const current = this.liveChildren(resource, rendered, owned);
    for (const desired of rendered) {
      // As the reconciler: a child waiting for one not ready yet (as it is now) is not applied.
      const key = `${desired.kind ?? ''}/${desired.metadata.name ?? ''}`;
      const waiting = waitingOn(waits.get(key) ?? [], (k) => current.get(k)).length > 0;
      await this.planChild(resource, desired, current, waiting);
    }
    for (const [key, o] of current) {
      if (!this.deletable.has(o.kind ?? '')) continue;
      if (rendered.some((d) => `${d.kind ?? ''}/${d.metadata.name ?? ''}` === key)) continue;
      this.totals.pruned++;
      this.changes.push({ resource: qualifiedName(resource), child: key, verb: 'pruned', fields: [] });
    }
  }

  /**
   * The children as the reconciler claims them: those the resource controls, and a rendered child
   * without a controller that our field manager applied (a claim kept when its resource goes).
   */
  private liveChildren(
    resource: CustomResourceObject,
    rendered: readonly KubeObject[],
    owned: ReadonlyMap<string, KubeObject>,
  ): Map<string, KubeObject> {
    const current = new Map(owned);
    for (const desired of rendered) {
      const key = `${desired.kind ?? ''}/${desired.metadata.name ?? ''}`;
      const namespace = desired.metadata.namespace ?? resource.metadata.namespace ?? '';
      const kept = this.uncontrolled.get(`${namespace}/${key}`);
      if (!current.has(key) && kept && !notOwnedReason(kept, resource.metadata.uid ?? '', this.client.fieldManager))
        current.set(key, kept);
    }
    return current;
  }

  private async planChild(
    resource: CustomResourceObject,
    desired: KubeObject,
    current: ReadonlyMap<string, KubeObject>,
    waiting: boolean,
  ): Promise<void> {
    const type = ownedType(this.decl, desired.kind);
    const key = `${type.kind}/${desired.metadata.name ?? ''}`;
    const live = current.get(key);
    if (live && !needsApply(desired, live, this.client.fieldManager)) {
      this.totals.unchanged++;
      return;
    }
    if (waiting) {
      this.totals.held++;
      return;
    }
    if (!live) {
      this.totals.created++;
      this.changes.push({ resource: qualifiedName(resource), child: key, verb: 'created', fields: [] });
      return;
    }
    const changes = await this.appliedChanges(resource, type, desired, live);
    if (!changes) return;
    if (changes.length === 0) {
      this.totals.unchanged++;
      return;
    }
    this.totals.changed++;
    this.changes.push({ resource: qualifiedName(resource), child: key, verb: 'changed', fields: changes });
    for (const c of changes) {
      const k = `${type.kind}\u0000${c.field}\u0000${c.change}`;
      this.fieldCounts.set(k, (this.fieldCounts.get(k) ?? 0) + 1);
    }
  }

  /**
   * The fields of the reconciler's own apply that change: what it would write, and nothing another
   * controller keeps (a Deployment's revision annotation). A StatefulSet's claims grow apart from
   * its apply, as the reconciler grows them (the rest is dry-run with the claims' sizes as they
   * are); a shrink is refused. Undefined (counted) when refused.
   */
  private async appliedChanges(
    resource: CustomResourceObject,
    type: ResourceType,
    desired: KubeObject,
    live: KubeObject,
  ): Promise<FieldChange[] | undefined> {
    const key = `${type.kind}/${desired.metadata.name ?? ''}`;
    const { grown, shrunk } = type.kind === 'StatefulSet' ? claimTemplateChanges(live, desired) : NO_CLAIM_CHANGES;
    const [shrink] = shrunk;
    if (shrink) {
      this.totals.refused++;
      this.refused.push({ resource: qualifiedName(resource), child: key, message: shrinkRefusal(key, shrink) });
      return undefined;
    }
    const after = await this.dryRun(resource, type, grown.length ? withCurrentClaimSizes(desired, live) : desired, key);
    if (!after) return undefined;
    return [
      ...appliedFieldChanges(live, after, this.client.fieldManager),
      ...grown.map((g) => ({
        field: `spec.volumeClaimTemplates[${g.template}].spec.resources.requests.storage`,
        change: 'changed' as const,
      })),
    ];
  }

  /** The child as the API server would store it, or undefined (counted) when it would refuse it. */
  private async dryRun(
    resource: CustomResourceObject,
    type: ResourceType,
    desired: KubeObject,
    key: string,
  ): Promise<KubeObject | undefined> {
    this.requests.dryRuns++;
    try {
      const namespace = desired.metadata.namespace ?? resource.metadata.namespace;
      return await this.client.apply(
        type,
        { ...desired, metadata: { ...desired.metadata, namespace } },
        { dryRun: true },
      );
    } catch (err) {
      const status = err instanceof ApiError ? err.status : 0;
      if (status < 400 || status >= 500 || status === 409) throw err;
      this.totals.refused++;
      this.refused.push({
        resource: qualifiedName(resource),
        child: key,
        message: err instanceof Error ? err.message : String(err),
      });
      return undefined;
    }
  }

  plan(resources: number): Omit<Plan, 'read' | 'crd' | 'invalid'> {
    const fieldChangeList = [...this.fieldCounts].map(([k, count]) => {
      const [kind = '', field = '', change = ''] = k.split('\u0000');
      return { kind, field, change: fieldChange(change), count };
    });
    fieldChangeList.sort((a, b) => b.count - a.count || a.field.localeCompare(b.field));
    return {
      kind: this.decl.for.kind,
      resources,
      children: this.totals,
      fieldChanges: fieldChangeList,
      refused: this.refused,
      // In the order of the resources and children, not of the dry runs' answers.
      changes: this.changes.toSorted((a, b) => a.resource.localeCompare(b.resource) || a.child.localeCompare(b.child)),
      requests: this.requests,
    };
  }
}

/** Whether the plan has anything to do (or to refuse): its exit code is 1 then. */
export function planChanges(plan: Plan): boolean {
  const c = plan.children;
  return c.changed + c.created + c.pruned + c.refused + plan.invalid.length > 0 || crdChanges(plan.crd);
}

/** The plan as text. */
export function planReport(plan: Plan): string {
  const c = plan.children;
  const lines = [
    ...crdChangeReport(plan.crd),
    '',
    `${plan.resources} ${plan.kind} resources (read as ${plan.read}, converted by the new code): ${c.unchanged} children unchanged, ${c.changed} would change, ${c.created} would be created, ${c.held} would wait for others, ${c.pruned} would be pruned, ${c.refused} would be refused`,
  ];
  if (plan.fieldChanges.length) lines.push('', 'Field changes:');
  for (const f of plan.fieldChanges)
    lines.push(`  ${f.field}: ${f.change} — ${f.count} ${f.kind}${f.count === 1 ? '' : 's'}`);
  if (plan.refused.length) lines.push('', 'Refused by the API server:');
  for (const r of plan.refused) lines.push(`  ${r.resource} ${r.child}: ${r.message}`);
  if (plan.invalid.length) lines.push('', `The new schema refuses (an update of each would be refused):`);
  for (const r of plan.invalid) lines.push(`  ${plan.kind} ${r.resource}: ${r.message}`);
  lines.push('', `Requests: ${plan.requests.lists} lists, ${plan.requests.dryRuns} dry runs. Nothing was written.`);
  return `${lines.join('\n')}\n`;
}

export { fieldChanges };

/** A field change as its tally key spells it. */
function fieldChange(change: string): 'added' | 'removed' | 'changed' {
  return change === 'added' || change === 'removed' ? change : 'changed';
}
