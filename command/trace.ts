/**
 * `cdk8s-operator-kit trace`: one live resource as a tree read from the cluster — its children
 * (the objects it controls), the pods of its workloads and the claims they mount — each with the
 * verdict the reconciler reaches on it. The verdicts come from the rules the runtime judges
 * children by (`assessChildren`, `childHealth`: a StatefulSet not ready while a claim is smaller
 * than asked, a pod that cannot run named with its container and why), never from another field
 * of the object; the resource's own verdict is its conditions read as kstatus reads them.
 */
import type { ControllerDeclaration } from '../constructs/core/controller-declaration';
import {
  assessChildren,
  BuiltinTypes,
  childHealth,
  type CustomResourceObject,
  type KubeObject,
  type PersistentVolumeClaim,
  type Pod,
  madeBy,
  type Readiness,
  type ResourceType,
  type Verdict,
} from '../constructs/contract';
import { POD_WORKLOAD_KINDS } from '../constructs/contract/health';
import { compareText } from '../constructs/contract/compare';
import type { KubeClient } from '../operator/runtime/client';
import { withTypeMeta } from './served-version';

/** One object of the tree and its verdict. */
export interface TraceNode {
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  readonly readiness: Readiness;
  readonly reason: string;
  readonly message: string;
  /** A pod's node, once scheduled. */
  readonly node?: string;
  readonly children: readonly TraceNode[];
}

/** A resource's tree and the verdict on the whole. */
export interface Trace {
  /** The resource is Ready by its conditions and every child the reconciler judges is as its spec asks. */
  readonly ready: boolean;
  /**
   * Why the whole is not ready though the resource's conditions say it is: a status ahead of the
   * cluster (a child not as asked), which the reconciler's next status corrects.
   */
  readonly note?: string;
  readonly resource: TraceNode;
}

/** The types whose objects a trace reads: what the kind owns, and the pods and claims of its workloads. */
export function tracedTypes(decl: Pick<ControllerDeclaration, 'owns'>): ResourceType[] {
  const types = [...(decl.owns ?? []), BuiltinTypes.Pod, BuiltinTypes.PersistentVolumeClaim];
  const seen = new Set<string>();
  return types.filter((t) => {
    const key = `${t.group}/${t.resource}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Reads the objects a trace of `resource` needs (in its namespace; every namespace for a cluster-scoped one) and builds it. */
export async function traceResource(
  client: KubeClient,
  decl: Pick<ControllerDeclaration, 'owns'>,
  resource: CustomResourceObject,
): Promise<Trace> {
  const namespace = resource.metadata.namespace;
  const lists = await Promise.all(
    tracedTypes(decl).map(async (type) => {
      const { items } = await client.list(type, type.namespaced ? namespace : undefined);
      // A list's items carry no kind: the rules are chosen by it.
      return withTypeMeta(type, items);
    }),
  );
  return traceOf(resource, lists.flat());
}

/** The tree of `resource` among `objects` (everything listed). Pure. */
export function traceOf(resource: CustomResourceObject, objects: readonly KubeObject[]): Trace {
  const uid = resource.metadata.uid;
  // The runtime's children: the objects the resource is the controller of.
  const children = objects
    .filter((o) => o.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === uid))
    .sort(byKindThenName);
  const pods = objects.filter((o): o is Pod => o.kind === 'Pod');
  const claims = objects.filter((o): o is PersistentVolumeClaim => o.kind === 'PersistentVolumeClaim');
  const podsOf = (workload: KubeObject) => pods.filter((p) => madeBy(p, workload));
  const health = assessChildren({
    children,
    podsOf,
    claimsOf: (child) => claims.filter((c) => c.metadata.namespace === child.metadata.namespace),
  });
  const verdictOf = (child: KubeObject): Verdict =>
    health.children.find((h) => h.kind === child.kind && h.name === child.metadata.name) ?? childHealth(child);
  // A claim is shown under the pod that mounts it, not again under the resource that owns it.
  const tracedPods = children.filter(isPodWorkload).flatMap(podsOf);
  const mounted = new Set(tracedPods.flatMap(claimNamesOf));
  const childNodes = children
    .filter((c) => !(c.kind === 'PersistentVolumeClaim' && mounted.has(c.metadata.name ?? '')))
    .map((child) => node(child, verdictOf(child), isPodWorkload(child) ? podNodes(podsOf(child), claims) : []));
  const own = childHealth(resource);
  const root = node(resource, own, childNodes);
  const notReady = health.notReady[0];
  const note =
    own.readiness === 'Current' && notReady
      ? `its status says it is ready, but ${notReady.kind} ${notReady.name} is not: ${notReady.message}`
      : undefined;
  return { ready: own.readiness === 'Current' && health.ready, ...(note ? { note } : {}), resource: root };
}

function isPodWorkload(o: KubeObject): boolean {
  return POD_WORKLOAD_KINDS.includes(o.kind ?? '');
}

/** A workload's pods, each with the claims it mounts (or a claim it waits for that is not there). */
function podNodes(pods: readonly Pod[], claims: readonly PersistentVolumeClaim[]): TraceNode[] {
  return [...pods].sort(byKindThenName).map((pod) =>
    node(
      pod,
      childHealth(pod),
      claimNamesOf(pod).map((name) => {
        const claim = claims.find((c) => c.metadata.name === name && c.metadata.namespace === pod.metadata.namespace);
        return claim
          ? node(claim, childHealth(claim), [])
          : {
              kind: 'PersistentVolumeClaim',
              namespace: pod.metadata.namespace,
              name,
              readiness: 'InProgress' as const,
              reason: 'NotFound',
              message: `the pod mounts it and it does not exist`,
              children: [],
            };
      }),
    ),
  );
}

/** The claims a pod's volumes name. */
function claimNamesOf(pod: KubeObject): string[] {
  const spec = pod.spec as { volumes?: { persistentVolumeClaim?: { claimName?: string } }[] } | undefined;
  return (spec?.volumes ?? []).flatMap((v) =>
    v.persistentVolumeClaim?.claimName ? [v.persistentVolumeClaim.claimName] : [],
  );
}

function node(object: KubeObject, verdict: Verdict, children: TraceNode[]): TraceNode {
  const nodeName = object.kind === 'Pod' ? (object as Pod).spec?.nodeName : undefined;
  return {
    kind: object.kind ?? '',
    ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
    name: object.metadata.name ?? '',
    readiness: verdict.readiness,
    reason: verdict.reason,
    message: verdict.message,
    ...(nodeName ? { node: nodeName } : {}),
    children,
  };
}

function byKindThenName(a: KubeObject, b: KubeObject): number {
  return compareText(a.kind ?? '', b.kind ?? '') || compareText(a.metadata.name ?? '', b.metadata.name ?? '');
}

/** How long a message may be in the default table before it is cut (-o wide prints it whole). */
const MESSAGE_WIDTH = 80;

/** The tree as a table: NAME (indented by depth), READY, REASON, MESSAGE; -o wide adds each pod's NODE and prints messages whole. */
export function traceTable(trace: Trace, wide: boolean): string {
  const rows: string[][] = [];
  const walk = (n: TraceNode, prefix: string, childPrefix: string) => {
    const message = wide || n.message.length <= MESSAGE_WIDTH ? n.message : `${n.message.slice(0, MESSAGE_WIDTH - 1)}…`;
    rows.push([`${prefix}${n.kind}/${n.name}`, n.readiness, n.reason, ...(wide ? [n.node ?? ''] : []), message]);
    n.children.forEach((c, i) => {
      const last = i === n.children.length - 1;
      walk(c, `${childPrefix}${last ? '└─ ' : '├─ '}`, `${childPrefix}${last ? '   ' : '│  '}`);
    });
  };
  walk(trace.resource, '', '');
  const header = ['NAME', 'READY', 'REASON', ...(wide ? ['NODE'] : []), 'MESSAGE'];
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => columnsOf(r[i] ?? ''))));
  const lines = all.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - columnsOf(cell))))
      .join('  ')
      .trimEnd(),
  );
  if (trace.note) lines.push('', `Not ready: ${trace.note}`);
  return `${lines.join('\n')}\n`;
}

/** How many columns a cell takes: a code point each (the tree's box-drawing characters are one each, not one per UTF-16 unit). */
function columnsOf(cell: string): number {
  return Array.from(cell).length;
}

/** The tree as Graphviz's dot: an edge from each object to what it controls, mounts or runs; colour by verdict. */
export function traceDot(trace: Trace): string {
  const colour: Record<Readiness, string> = { Current: 'darkgreen', InProgress: 'orange', Failed: 'red' };
  const id = (n: TraceNode) => JSON.stringify(`${n.kind}/${n.name}`);
  const lines = ['digraph trace {', '  rankdir=LR;', '  node [shape=box];'];
  const seen = new Set<string>();
  const walk = (n: TraceNode) => {
    if (!seen.has(id(n))) {
      seen.add(id(n));
      const label = JSON.stringify(`${n.kind}/${n.name}\n${n.readiness}: ${n.reason}`);
      lines.push(`  ${id(n)} [label=${label}, color=${colour[n.readiness]}];`);
    }
    for (const c of n.children) {
      walk(c);
      lines.push(`  ${id(n)} -> ${id(c)};`);
    }
  };
  walk(trace.resource);
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
