/**
 * The chart's `watchNamespaces` list, from templates probed with one watched namespace.
 *
 * The construct is probed with one watched namespace (`.Values.watchNamespace`), because a value
 * is found by changing it and looking at what changed. What it found becomes the list here:
 * - an object in the watched namespace (a Role, its RoleBinding) is written once per namespace,
 *   in a `range` over the list;
 * - the reconciler's namespace flag is `--namespace=<it>` for one, `--namespaces=<a,b>` for more,
 *   as the construct writes it (`watchArgs`);
 * - a list of the one namespace (an admission hook's `namespaceSelector`) becomes the list;
 * - a condition on it is a condition on the list (an empty list is false in a template).
 * Any other use of the one namespace cannot be written for many, and is refused.
 */
import { watchArgs } from '../core/operator';
import type { Item, Part, TemplateNode } from './template-tree';

/** The expression the construct is probed with. */
export const ONE_WATCHED = '.Values.watchNamespace';
/** The chart's value: the namespaces watched, none for every namespace. */
export const WATCHED_LIST = '.Values.watchNamespaces';
/** The namespace of one object written per watched namespace, inside the `range`. */
export const EACH_WATCHED = '$namespace';

const ONE_WATCHED_PATTERN = /\.Values\.watchNamespace\b/g;
/** The root objects of an expression; inside a `range` they are reached through `$`. */
const ROOT_PATTERN = /(^|[^\w.$])\.(Values|Release|Chart|Capabilities|Template)\b/g;

/** A template of one object, with what the list makes of it. */
export interface WatchedTemplate {
  readonly node: TemplateNode;
  /** Written once per watched namespace (`range`). */
  readonly perNamespace: boolean;
}

/** A condition or action on the one watched namespace, on the list instead. */
export function onWatchedList(expr: string): string {
  return expr.replace(ONE_WATCHED_PATTERN, WATCHED_LIST);
}

/** The range a per-namespace object is written in. */
export const WATCHED_RANGE = { variable: EACH_WATCHED, over: WATCHED_LIST };

/** One object's template with the one watched namespace turned into the list (see the module). */
export function watchedNamespacesTemplate(node: TemplateNode, where: string): WatchedTemplate {
  const perNamespace = namespaceIsWatched(node);
  const expr = (e: string) => {
    const listed = onWatchedList(e);
    return perNamespace ? listed.replace(ROOT_PATTERN, '$1$$.$2') : listed;
  };
  const walk = (n: TemplateNode, path: readonly string[]): TemplateNode => {
    switch (n.kind) {
      case 'scalar':
        return { ...n, parts: scalarParts(n.parts, path, perNamespace, expr, `${where}, ${path.join('.')}`) };
      case 'block':
        return { ...n, expr: expr(n.expr) };
      case 'map':
        return {
          ...n,
          entries: n.entries.map((e) => ({ ...e, when: e.when && expr(e.when), node: walk(e.node, [...path, e.key]) })),
        };
      case 'list': {
        if (isOneWatched(n)) return { kind: 'block', expr: expr(WATCHED_LIST) };
        return { ...n, items: n.items.map((item, i) => listItem(item, [...path, String(i)])) };
      }
      case 'alternatives':
        return { ...n, cases: n.cases.map((c, i) => listItem(c, [...path, String(i)])) };
    }
  };
  const listItem = (item: Item, path: readonly string[]): Item => ({
    ...item,
    when: item.when && expr(item.when),
    node: walk(item.node, path),
  });
  return { node: walk(node, []), perNamespace };
}

/** Whether the object's own namespace is the watched one: it is then written for each. */
function namespaceIsWatched(node: TemplateNode): boolean {
  if (node.kind !== 'map') return false;
  const metadata = node.entries.find((e) => e.key === 'metadata')?.node;
  const namespace = metadata?.kind === 'map' ? metadata.entries.find((e) => e.key === 'namespace') : undefined;
  return !namespace?.when && namespace?.node.kind === 'scalar' && isOnlyOneWatched(namespace.node.parts);
}

function isOnlyOneWatched(parts: readonly Part[]): boolean {
  return parts.length === 1 && parts[0] !== undefined && 'action' in parts[0] && parts[0].action === ONE_WATCHED;
}

/** A list of the one watched namespace, and nothing else (a `namespaceSelector`'s values). */
function isOneWatched(list: Extract<TemplateNode, { kind: 'list' }>): boolean {
  const [item, ...more] = list.items;
  return more.length === 0 && !!item && !item.when && item.node.kind === 'scalar' && isOnlyOneWatched(item.node.parts);
}

/** The flag the construct gives the reconciler, split at the namespaces: for one, and for more. */
function namespaceFlag(): { one: string; many: string; separator: string } {
  const [a, b] = ['\u0001', '\u0002'];
  const one = watchArgs([a])[0] ?? '';
  const many = watchArgs([a, b])[0] ?? '';
  const manyPrefix = many.slice(0, many.indexOf(a));
  return {
    one: one.slice(0, one.indexOf(a)),
    many: manyPrefix,
    separator: many.slice(manyPrefix.length + a.length, many.indexOf(b)),
  };
}

function scalarParts(
  parts: readonly Part[],
  path: readonly string[],
  perNamespace: boolean,
  expr: (e: string) => string,
  where: string,
): Part[] {
  const uses = parts.filter((p) => 'action' in p && p.action === ONE_WATCHED).length;
  if (uses === 0) return parts.map((p) => ('action' in p ? { action: expr(p.action) } : p));
  if (perNamespace && path.join('.') === 'metadata.namespace') return [{ action: EACH_WATCHED }];
  const flag = namespaceFlag();
  const [first, second] = parts;
  const isFlag =
    parts.length === 2 &&
    first !== undefined &&
    'text' in first &&
    first.text === flag.one &&
    second !== undefined &&
    'action' in second &&
    second.action === ONE_WATCHED;
  if (!isFlag) throw new Error(`${where}: the watched namespace is used where a list of them cannot be written`);
  const list = expr(WATCHED_LIST);
  return [
    { action: `if eq (len ${list}) 1` },
    { text: flag.one },
    { action: `first ${list}` },
    { action: 'else' },
    { text: flag.many },
    { action: `join ${JSON.stringify(flag.separator)} ${list}` },
    { action: 'end' },
  ];
}
