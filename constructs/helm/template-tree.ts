/**
 * A Helm template as a tree: the objects an operator makes, where some text is a value
 * (`{{ .Values.image.tag }}`), some blocks are a value (`toYaml .Values.resources`), and some
 * entries, items and objects exist only under a condition (`{{- if .Values.metrics.secure }}`).
 *
 * Built in two steps, both from what the construct itself makes:
 *  - `locateValues`: in one variant, each changed leaf between the construct's output with a value
 *    and with another legal value for it is where that value goes;
 *  - `mergeVariants`: the variants' trees (one per combination of switches) merged into one, each
 *    part conditioned on the combinations that have it.
 */
import { isJsonObject } from '../contract/json';

/** A piece of a scalar: literal text, or a template action (`.Values.x`, `if …`, `else`, `end`). */
export type Part = { readonly text: string } | { readonly action: string };

export type TemplateNode =
  | {
      readonly kind: 'scalar';
      readonly type: 'string' | 'number' | 'boolean' | 'null';
      readonly parts: readonly Part[];
    }
  | { readonly kind: 'block'; readonly expr: string }
  | { readonly kind: 'map'; readonly entries: readonly Entry[] }
  | { readonly kind: 'list'; readonly items: readonly Item[] }
  /** Different shapes under different conditions: written as one conditional entry or item each. */
  | { readonly kind: 'alternatives'; readonly cases: readonly Item[] };

export interface Entry {
  readonly key: string;
  readonly when?: string;
  readonly node: TemplateNode;
}

export interface Item {
  readonly when?: string;
  readonly node: TemplateNode;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A plain JSON value as a tree without values or conditions. */
export function literal(v: unknown): TemplateNode {
  if (v === null) return { kind: 'scalar', type: 'null', parts: [{ text: 'null' }] };
  if (Array.isArray(v)) return { kind: 'list', items: v.map((x) => ({ node: literal(x) })) };
  if (typeof v === 'object')
    return { kind: 'map', entries: Object.entries(v).map(([key, x]) => ({ key, node: literal(x) })) };
  if (typeof v === 'string') return { kind: 'scalar', type: 'string', parts: [{ text: v }] };
  if (typeof v === 'number') return { kind: 'scalar', type: 'number', parts: [{ text: String(v) }] };
  if (typeof v === 'boolean') return { kind: 'scalar', type: 'boolean', parts: [{ text: String(v) }] };
  throw new Error(`not JSON: ${typeof v}`);
}

/** Where a value goes in one leaf: replace `[start, end)` of its text by the value. */
interface Span {
  readonly start: number;
  readonly end: number;
  readonly expr: string;
}

/** One value's places in one object tree, found by comparing the output for two of its values. */
export interface ValuePlaces {
  /** The value's Helm expression. */
  readonly expr: string;
  /** Leaves (paths) whose text holds the value, and where. */
  readonly spans: Map<string, Span>;
  /** Paths of subtrees that are the whole value (`resources`). */
  readonly blocks: Set<string>;
}

/** One value to locate: its expression, and the tree made with its default and with another value. */
export interface Probe {
  readonly expr: string;
  readonly type: 'string' | 'number' | 'block';
  readonly value: unknown;
  readonly other: unknown;
}

const pathKey = (path: readonly (string | number)[]) => JSON.stringify(path);

/**
 * Where `probe`'s value is in `base` (made with its default), given `changed` (the same made with
 * its other value). Every leaf that differs must be explained by the value, or this throws: a
 * value the chart offers must change exactly what the construct changes for it.
 */
export function locateValue(base: Json, changed: Json, probe: Probe, where: string): ValuePlaces {
  const places: ValuePlaces = { expr: probe.expr, spans: new Map(), blocks: new Set() };
  const unexplained: string[] = [];
  const walk = (a: Json, b: Json, path: (string | number)[]): void => {
    if (probe.type === 'block' && deepEqual(a, probe.value) && deepEqual(b, probe.other)) {
      places.blocks.add(pathKey(path));
      return;
    }
    const pairs = childPairs(a, b);
    if (pairs) {
      for (const [k, x, y] of pairs) {
        if (x === undefined || y === undefined) unexplained.push(`${path.concat(k).join('.')} (present in one only)`);
        else walk(x, y, path.concat(k));
      }
      return;
    }
    if (deepEqual(a, b)) return;
    const span = probe.type === 'block' ? undefined : spanOf(a, b, probe);
    if (span) places.spans.set(pathKey(path), span);
    else unexplained.push(`${path.join('.')}: ${JSON.stringify(a)} → ${JSON.stringify(b)}`);
  };
  walk(base, changed, []);
  if (unexplained.length > 0) {
    throw new Error(
      `${where}: setting ${probe.expr} changes more than its value can express in a template: ${unexplained.join('; ')}`,
    );
  }
  return places;
}

/** The children of two lists, or of two maps, side by side by index or key; undefined for anything else. */
function childPairs(a: Json, b: Json): [string | number, Json | undefined, Json | undefined][] | undefined {
  if (Array.isArray(a) && Array.isArray(b))
    return Array.from({ length: Math.max(a.length, b.length) }, (_, i) => [i, a[i], b[i]]);
  if (isJsonMap(a) && isJsonMap(b))
    return [...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [k, a[k], b[k]]);
  return undefined;
}

/** The one place in leaf `a` where the value's text stands, if putting the other value there gives `b`. */
function spanOf(a: Json, b: Json, probe: Probe): Span | undefined {
  if (typeof a !== 'string' && typeof a !== 'number') return undefined;
  const text = String(a);
  const value = String(probe.value);
  const other = String(probe.other);
  if (value === '') return undefined;
  for (let at = text.indexOf(value); at >= 0; at = text.indexOf(value, at + 1)) {
    const replaced = text.slice(0, at) + other + text.slice(at + value.length);
    const expected = typeof b === 'number' ? String(b) : b;
    if (replaced === expected && typeof a === typeof b) return { start: at, end: at + value.length, expr: probe.expr };
  }
  return undefined;
}

/** One variant's objects with every located value put in as a template action. */
export function applyValues(tree: Json, places: readonly ValuePlaces[]): TemplateNode {
  const spans = new Map<string, Span[]>();
  const blockExpr = new Map<string, string>();
  for (const p of places) {
    for (const [k, s] of p.spans) spans.set(k, [...(spans.get(k) ?? []), s]);
    for (const k of p.blocks) blockExpr.set(k, p.expr);
  }
  const build = (v: Json, path: (string | number)[]): TemplateNode => {
    const key = pathKey(path);
    const block = blockExpr.get(key);
    if (block) return { kind: 'block', expr: block };
    if (Array.isArray(v)) return { kind: 'list', items: v.map((x, i) => ({ node: build(x, path.concat(i)) })) };
    if (v !== null && typeof v === 'object') {
      return { kind: 'map', entries: Object.entries(v).map(([k, x]) => ({ key: k, node: build(x, path.concat(k)) })) };
    }
    const leafSpans = spans.get(key);
    if (!leafSpans) return literal(v);
    return { kind: 'scalar', type: typeof v === 'number' ? 'number' : 'string', parts: partsOf(String(v), leafSpans) };
  };
  return build(tree, []);
}

/** A leaf's text with its spans replaced by actions; overlapping spans cannot be expressed. */
function partsOf(text: string, spans: readonly Span[]): Part[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  const parts: Part[] = [];
  let at = 0;
  for (const s of sorted) {
    if (s.start < at) throw new Error(`two values overlap in ${JSON.stringify(text)}`);
    if (s.start > at) parts.push({ text: text.slice(at, s.start) });
    parts.push({ action: s.expr });
    at = s.end;
  }
  if (at < text.length) parts.push({ text: text.slice(at) });
  return parts;
}

// ---------------------------------------------------------------------------------------------
// Merging variants

/** The switches' values in one variant, in the order of `Conditions.switches`. Compared by identity. */
export type Variant = readonly boolean[];

interface Literal {
  /** Index of its switch. */
  readonly of: number;
  readonly expr: string;
  readonly test: (v: Variant) => boolean;
}

/** Conditions over the switches, as Helm expressions. */
export class Conditions {
  private readonly literals: readonly Literal[];

  constructor(readonly switches: readonly string[]) {
    this.literals = switches.flatMap((s, i) => [
      { of: i, expr: s, test: (v: Variant) => v[i] === true },
      { of: i, expr: `not ${s}`, test: (v: Variant) => v[i] !== true },
    ]);
  }

  /**
   * The simplest expression true in exactly the variants `present` among `domain` (variants
   * outside the domain do not matter), or undefined when that is all of the domain.
   */
  when(present: ReadonlySet<Variant>, domain: ReadonlySet<Variant>): string | undefined {
    if ([...domain].every((v) => present.has(v))) return undefined;
    for (const candidate of this.candidates()) {
      if ([...domain].every((v) => candidate.test(v) === present.has(v))) return candidate.expr;
    }
    // Every variant spelled out: always right, rarely needed.
    const terms = [...present].map(
      (v) => `(and ${this.switches.map((s, i) => (v[i] === true ? s : `(not ${s})`)).join(' ')})`,
    );
    return terms.length === 1 ? terms.join('').slice(1, -1) : `or ${terms.join(' ')}`;
  }

  /** Single switches, then pairs joined by `and` or `or`, each switch on or off. */
  private *candidates(): Generator<{ expr: string; test: (v: Variant) => boolean }> {
    yield* this.literals;
    for (const [a, x] of this.literals.entries()) {
      for (const y of this.literals.slice(a + 1)) {
        if (x.of === y.of) continue;
        yield { expr: `and ${parenthesized(x.expr)} ${parenthesized(y.expr)}`, test: (v) => x.test(v) && y.test(v) };
        yield { expr: `or ${parenthesized(x.expr)} ${parenthesized(y.expr)}`, test: (v) => x.test(v) || y.test(v) };
      }
    }
  }
}

/** A negation as an argument of `and`/`or` needs parentheses. */
function parenthesized(expr: string): string {
  return expr.startsWith('not ') ? `(${expr})` : expr;
}

/** Trees of one thing (an object, a field) in some variants. */
type Versions = ReadonlyMap<Variant, TemplateNode>;

type MapNode = Extract<TemplateNode, { kind: 'map' }>;
type ListNode = Extract<TemplateNode, { kind: 'list' }>;
type ScalarNode = Extract<TemplateNode, { kind: 'scalar' }>;

/** The versions, when every node is of one kind (typed as such); else undefined. */
function everyOf<N extends TemplateNode>(
  versions: Versions,
  is: (n: TemplateNode) => n is N,
): ReadonlyMap<Variant, N> | undefined {
  const narrowed = new Map<Variant, N>();
  for (const [variant, node] of versions) {
    if (!is(node)) return undefined;
    narrowed.set(variant, node);
  }
  return narrowed;
}

/** One tree for all variants: what they share once, what differs under conditions. */
export function mergeVariants(versions: Versions, conditions: Conditions): TemplateNode {
  const domain = new Set(versions.keys());
  const nodes = [...versions.values()];
  const [first] = nodes;
  if (!first) throw new Error('nothing to merge');
  if (nodes.every((n) => deepEqual(n, first))) return first;
  const scalars = nodes.filter((n): n is ScalarNode => n.kind === 'scalar');
  const scalarVersions = everyOf(versions, (n): n is ScalarNode => n.kind === 'scalar');
  if (scalarVersions && scalars.every((n) => n.type === scalars[0]?.type)) {
    return chooseScalar(scalarVersions, conditions, domain);
  }
  const maps = everyOf(versions, (n): n is MapNode => n.kind === 'map');
  if (maps) return mergeMaps(maps, conditions, domain);
  const lists = everyOf(versions, (n): n is ListNode => n.kind === 'list');
  if (lists) return mergeLists(lists, conditions, domain);
  return {
    kind: 'alternatives',
    cases: groupEqual(versions).map((g) => ({ when: conditions.when(g.variants, domain), node: g.node })),
  };
}

/** Scalars that differ by variant: one scalar with `if`/`else` actions inside. */
function chooseScalar(
  versions: ReadonlyMap<Variant, ScalarNode>,
  conditions: Conditions,
  domain: ReadonlySet<Variant>,
): TemplateNode {
  const groups = groupEqual(versions);
  // `if x … else …` reads better than `if not x … else …`.
  if (groups.length === 2 && conditions.when(groups[0]?.variants ?? new Set(), domain)?.startsWith('not ')) {
    groups.reverse();
  }
  const parts: Part[] = [];
  let remaining = new Set(domain);
  for (const [i, g] of groups.entries()) {
    if (i === groups.length - 1) {
      parts.push({ action: 'else' }, ...g.node.parts, { action: 'end' });
      break;
    }
    // Never undefined: later groups remain.
    const when = conditions.when(g.variants, remaining) ?? 'true';
    parts.push({ action: i === 0 ? `if ${when}` : `else if ${when}` }, ...g.node.parts);
    remaining = new Set([...remaining].filter((v) => !g.variants.has(v)));
  }
  return { kind: 'scalar', type: first(versions).type, parts };
}

function mergeMaps(
  versions: ReadonlyMap<Variant, MapNode>,
  conditions: Conditions,
  domain: ReadonlySet<Variant>,
): TemplateNode {
  const keys: string[] = [];
  for (const node of versions.values()) for (const e of node.entries) if (!keys.includes(e.key)) keys.push(e.key);
  const entries = keys.map((key) => {
    const sub = new Map<Variant, TemplateNode>();
    for (const [v, node] of versions) {
      const e = node.entries.find((x) => x.key === key);
      if (e) sub.set(v, e.node);
    }
    return { key, when: conditions.when(new Set(sub.keys()), domain), node: mergeVariants(sub, conditions) };
  });
  return { kind: 'map', entries };
}

/**
 * Lists aligned item by item (longest common subsequence): items with the same `name` (containers,
 * ports, env) or equal items are one item; the others exist under a condition.
 */
function mergeLists(
  versions: ReadonlyMap<Variant, ListNode>,
  conditions: Conditions,
  domain: ReadonlySet<Variant>,
): TemplateNode {
  let slots: Map<Variant, TemplateNode>[] = [];
  for (const [v, node] of versions) {
    const items = node.items.map((i) => i.node);
    const pairs = commonSubsequence(slots, items, (slot, item) => sameItem(first(slot), item));
    const next: Map<Variant, TemplateNode>[] = [];
    let s = 0;
    let i = 0;
    for (const [ps, pi] of [...pairs, [slots.length, items.length] as const]) {
      next.push(...slots.slice(s, ps), ...items.slice(i, pi).map((item) => new Map([[v, item]])));
      const slot = slots[ps];
      const item = items[pi];
      if (slot && item) next.push(new Map([...slot, [v, item]]));
      s = ps + 1;
      i = pi + 1;
    }
    slots = next;
  }
  return {
    kind: 'list',
    items: slots.map((slot) => ({
      when: conditions.when(new Set(slot.keys()), domain),
      node: mergeVariants(slot, conditions),
    })),
  };
}

function first<T>(versions: ReadonlyMap<Variant, T>): T {
  for (const node of versions.values()) return node;
  throw new Error('no versions');
}

function sameItem(a: TemplateNode, b: TemplateNode): boolean {
  const name = (n: TemplateNode) =>
    n.kind === 'map' ? n.entries.find((e) => e.key === 'name' && e.node.kind === 'scalar')?.node : undefined;
  const na = name(a);
  const nb = name(b);
  return na && nb ? deepEqual(na, nb) : deepEqual(a, b);
}

/** Index pairs of a longest common subsequence of `a` and `b`, in order. */
function commonSubsequence<A, B>(a: readonly A[], b: readonly B[], same: (x: A, y: B) => boolean): [number, number][] {
  const width = b.length + 1;
  const lengths = new Array<number>((a.length + 1) * width).fill(0);
  const at = (i: number, j: number) => lengths[i * width + j] ?? 0;
  const matches = (i: number, j: number) => {
    const [x, y] = [a[i], b[j]];
    return x !== undefined && y !== undefined && same(x, y);
  };
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i * width + j] = matches(i, j) ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
    }
  }
  const pairs: [number, number][] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length;) {
    if (matches(i, j)) pairs.push([i++, j++]);
    else if (at(i + 1, j) >= at(i, j + 1)) i++;
    else j++;
  }
  return pairs;
}

function groupEqual<T extends TemplateNode>(versions: ReadonlyMap<Variant, T>): { variants: Set<Variant>; node: T }[] {
  const groups: { variants: Set<Variant>; node: T }[] = [];
  for (const [v, node] of versions) {
    const g = groups.find((x) => deepEqual(x.node, node));
    if (g) g.variants.add(v);
    else groups.push({ variants: new Set([v]), node });
  }
  return groups;
}

function isJsonMap(v: Json | undefined): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Equal as JSON, whatever the order of keys. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (!isJsonObject(a) || !isJsonObject(b)) return false;
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => deepEqual(a[k], b[k]));
}
