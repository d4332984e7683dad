/**
 * `cdk8s-operator-kit plan`: what the controllers of the code at hand (a new operator version)
 * would do to every existing resource of a kind — totals, the distinct field changes with how
 * many children each touches, and what the API server would refuse — before it rolls out.
 * Writes nothing. The load is bounded: one list per type, and a server-side apply dry run only
 * for a child the local change check (our field manager's managed fields) says would change.
 */
import type { ControllerDeclaration } from '../constructs/core/controller-declaration';
import type { CustomResourceObject, ExternalWrite, KubeObject, ResourceType } from '../constructs/contract';
import { type KubeClient, appliedFieldChanges, type FieldChange, fieldChanges } from '../operator/runtime/client';
import type { ExecutedWrite, PreviewReads } from '../operator/runtime/plan';
import { type CrdChange, crdChange, crdChangeReport, crdChanges } from './crd-change';
import { type ChildPreview, previewResource } from './preview';
import { listForPreview } from '../operator/runtime/plan';
import { ClusterCrds, listAsNewCode, type ServedResources } from './served-version';
import { controllerNamed, RenderError } from './render';

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

/** One write of the reconciler's plan for a resource. */
export interface PlannedWrite extends ExecutedWrite {
  /** `namespace/name` of the resource. */
  readonly resource: string;
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
  /**
   * Every write the reconciler would make, resource by resource in its order — each child's apply,
   * claim grown, StatefulSet made again, prune and stuck pod deleted — with why: its plan, as it
   * records the writes it makes (`opkit_reconcile_writes_total`).
   */
  readonly writes: readonly PlannedWrite[];
  /**
   * The writes the kind's external step would make to its outside system now (one per resource at
   * most: a step makes one change, then looks again), and the resources for which it could not be
   * previewed from here, with why.
   */
  readonly external: {
    readonly writes: readonly (ExternalWrite & { readonly resource: string })[];
    readonly notPreviewed: readonly { readonly resource: string; readonly reason: string }[];
  };
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
  const reads = await planner.reads();
  let done = 0;
  // A small pool of workers: dry runs in flight stay within the concurrency.
  const queue = [...resources];
  await Promise.all(
    Array.from({ length: Math.max(1, options.concurrency ?? 8) }, async () => {
      for (let r = queue.shift(); r; r = queue.shift()) {
        await planner.planResource(r, reads);
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
  private readonly writes: PlannedWrite[] = [];
  private readonly externalWrites: (ExternalWrite & { resource: string })[] = [];
  private readonly notPreviewed: { resource: string; reason: string }[] = [];
  private readonly client: KubeClient;

  constructor(
    private readonly cluster: ClusterCrds,
    private readonly decl: ControllerDeclaration,
    private readonly namespace: string | undefined,
  ) {
    this.client = cluster.client;
  }

  /** The kind's resources, read at a version the cluster serves and converted as the new code would. */
  async resources(): Promise<ServedResources> {
    this.requests.lists++;
    return listAsNewCode(this.cluster, this.decl, this.namespace);
  }

  /** One type's objects, counted; typed (a list's items lack apiVersion and kind) by `listForPreview`. */
  private async list<T extends KubeObject>(type: ResourceType<T>): Promise<T[]> {
    this.requests.lists++;
    return (await this.client.list<T>(type, type.namespaced ? this.namespace : undefined)).items;
  }

  /** What the reconciler reads its plans from, listed once: one list per type (see `listForPreview`). */
  reads(): Promise<PreviewReads> {
    return listForPreview(this.decl, (type) => this.list(type));
  }

  /** What the new version would do to one resource's children: the reconciler's own plan, tallied. */
  async planResource(resource: CustomResourceObject, reads: PreviewReads): Promise<void> {
    const preview = await previewResource(this.client, this.decl, resource, reads);
    const name = qualifiedName(resource);
    this.requests.dryRuns += preview.dryRuns;
    for (const { key, reason } of preview.notOwned ?? []) {
      this.totals.refused++;
      this.refused.push({ resource: name, child: key, message: reason });
    }
    for (const c of preview.children) this.tally(name, c);
    this.writes.push(...preview.writes.map((w) => ({ resource: name, ...w })));
    this.externalWrites.push(...(preview.external?.writes ?? []).map((w) => ({ resource: name, ...w })));
    if (preview.external?.unavailable) this.notPreviewed.push({ resource: name, reason: preview.external.unavailable });
    for (const w of preview.writes.filter((p) => p.type === 'PruneChild')) {
      this.totals.pruned++;
      this.changes.push({ resource: name, child: `${w.kind}/${w.name}`, verb: 'pruned', fields: [] });
    }
  }

  /** One child's fate, counted: a change by the fields of the reconciler's apply that change. */
  private tally(resource: string, c: ChildPreview): void {
    const key = `${c.kind}/${c.name}`;
    if (c.verb === 'refused') {
      this.totals.refused++;
      this.refused.push({ resource, child: key, message: c.refusal ?? '' });
      return;
    }
    if (c.verb !== 'changed') {
      this.totals[c.verb]++;
      if (c.verb === 'created') this.changes.push({ resource, child: key, verb: 'created', fields: [] });
      return;
    }
    const fields = [
      // What it would write, and nothing another controller keeps (a Deployment's revision annotation).
      ...(c.current && c.after ? appliedFieldChanges(c.current, c.after, this.client.fieldManager) : []),
      ...(c.grown ?? []).map((g) => ({
        field: `spec.volumeClaimTemplates[${g.template}].spec.resources.requests.storage`,
        change: 'changed' as const,
      })),
    ];
    if (fields.length === 0) {
      this.totals.unchanged++;
      return;
    }
    this.totals.changed++;
    this.changes.push({ resource, child: key, verb: 'changed', fields });
    for (const f of fields) {
      const k = `${c.kind}\u0000${f.field}\u0000${f.change}`;
      this.fieldCounts.set(k, (this.fieldCounts.get(k) ?? 0) + 1);
    }
  }

  plan(resources: number): Omit<Plan, 'read' | 'crd' | 'invalid'> {
    const fieldChangeList = [...this.fieldCounts].map(([k, count]) => {
      const [kind = '', field = '', change = ''] = k.split('\u0000');
      return { kind, field, change: fieldChange(change), count };
    });
    fieldChangeList.sort((a, b) => b.count - a.count || a.field.localeCompare(b.field));
    // In the order of the resources and children, not of the dry runs' answers.
    const byResource = <T extends { resource: string }>(list: readonly T[], then: (a: T, b: T) => number) =>
      list.toSorted((a, b) => a.resource.localeCompare(b.resource) || then(a, b));
    return {
      kind: this.decl.for.kind,
      resources,
      children: this.totals,
      fieldChanges: fieldChangeList,
      refused: this.refused,
      changes: byResource(this.changes, (a, b) => a.child.localeCompare(b.child)),
      writes: byResource(this.writes, () => 0),
      external: {
        writes: byResource(this.externalWrites, () => 0),
        notPreviewed: byResource(this.notPreviewed, () => 0),
      },
      requests: this.requests,
    };
  }
}

/** Whether the plan has anything to do (or to refuse): its exit code is 1 then. */
export function planChanges(plan: Plan): boolean {
  const c = plan.children;
  const counted =
    c.changed +
    c.created +
    c.pruned +
    c.refused +
    plan.invalid.length +
    plan.writes.length +
    plan.external.writes.length;
  return counted > 0 || crdChanges(plan.crd);
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
  lines.push(...writesReport(plan.writes), ...externalReport(plan.external));
  if (plan.refused.length) lines.push('', 'Refused by the API server:');
  for (const r of plan.refused) lines.push(`  ${r.resource} ${r.child}: ${r.message}`);
  if (plan.invalid.length) lines.push('', `The new schema refuses (an update of each would be refused):`);
  for (const r of plan.invalid) lines.push(`  ${plan.kind} ${r.resource}: ${r.message}`);
  lines.push('', `Requests: ${plan.requests.lists} lists, ${plan.requests.dryRuns} dry runs. Nothing was written.`);
  return `${lines.join('\n')}\n`;
}

/** The writes as counts by action, then each write other than a child's apply, with why. */
function writesReport(writes: readonly PlannedWrite[]): string[] {
  if (writes.length === 0) return [];
  const counts = new Map<string, number>();
  for (const w of writes) counts.set(w.type, (counts.get(w.type) ?? 0) + 1);
  const lines = ['', `Writes the reconciler would make: ${[...counts].map(([type, n]) => `${n} ${type}`).join(', ')}`];
  for (const w of writes)
    if (w.type !== 'ApplyChild') lines.push(`  ${w.resource} ${w.type} ${w.kind}/${w.name}: ${w.reason}`);
  return lines;
}

/** The external steps' writes, and where they could not be previewed. */
function externalReport(external: Plan['external']): string[] {
  const lines: string[] = [];
  if (external.writes.length) lines.push('', 'Writes to outside systems (each step makes one, then looks again):');
  for (const w of external.writes) lines.push(`  ${w.resource} ${w.system} ${w.action} ${w.target}: ${w.reason}`);
  if (external.notPreviewed.length) lines.push('', 'External steps not previewed from here:');
  for (const n of external.notPreviewed) lines.push(`  ${n.resource}: ${n.reason}`);
  return lines;
}

export { fieldChanges };

/** A field change as its tally key spells it. */
function fieldChange(change: string): 'added' | 'removed' | 'changed' {
  return change === 'added' || change === 'removed' ? change : 'changed';
}
