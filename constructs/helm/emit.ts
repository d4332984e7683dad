/**
 * Writes a template tree as a Helm template: block-style YAML with `{{- if }}`/`{{- end }}` lines
 * around conditional entries and items, values as actions inside scalars, and `toYaml … | nindent`
 * for whole blocks.
 */
import { stringify } from 'yaml';
import type { Item, Part, TemplateNode } from './template-tree';

/**
 * The template text of one object (the root is a map), conditioned on `when` if given, and
 * written once per item of `range.over` (as `range.variable`) if given.
 */
export function emitObject(
  node: TemplateNode,
  when?: string,
  range?: { readonly variable: string; readonly over: string },
): string {
  if (node.kind !== 'map') throw new Error('an object template must be a map');
  const object = mapLines(node, 0);
  const each = range ? [`{{- range ${range.variable} := ${range.over} }}`, '---', ...object, '{{- end }}'] : object;
  return `${conditional(when, 0, each).join('\n')}\n`;
}

function conditional(when: string | undefined, indent: number, lines: string[]): string[] {
  if (!when) return lines;
  const pad = ' '.repeat(indent);
  return [`${pad}{{- if ${when} }}`, ...lines, `${pad}{{- end }}`];
}

/** Lines of consecutive parts under the same condition, written under one `if`. */
function grouped<T extends { readonly when?: string }>(
  parts: readonly T[],
  indent: number,
  lines: (part: T) => string[],
) {
  const runs: { when?: string; lines: string[] }[] = [];
  for (const part of parts) {
    const last = runs[runs.length - 1];
    if (last && last.when === part.when) last.lines.push(...lines(part));
    else runs.push({ when: part.when, lines: lines(part) });
  }
  return runs.flatMap((r) => conditional(r.when, indent, r.lines));
}

function mapLines(node: Extract<TemplateNode, { kind: 'map' }>, indent: number): string[] {
  const pad = ' '.repeat(indent);
  return grouped(node.entries, indent, (e) => {
    const key = `${pad}${keyText(e.key)}:`;
    const cases: Item[] = e.node.kind === 'alternatives' ? [...e.node.cases] : [{ node: e.node }];
    return cases.flatMap((c) => conditional(c.when, indent, valueLines(key, c.node, indent)));
  });
}

/** `key: value` (or `- value` when `lead` is a list dash) and what follows it, for one node. */
function valueLines(lead: string, node: TemplateNode, indent: number): string[] {
  switch (node.kind) {
    case 'scalar':
      return [`${lead} ${scalarText(node)}`];
    case 'block':
      return [lead, `${' '.repeat(indent + 2)}{{- toYaml ${node.expr} | nindent ${indent + 2} }}`];
    case 'map':
      return node.entries.length === 0 ? [`${lead} {}`] : [lead, ...mapLines(node, indent + 2)];
    case 'list':
      return node.items.length === 0 ? [`${lead} []`] : [lead, ...listLines(node, indent + 2)];
    case 'alternatives':
      // Only nested directly in a map entry or a list item, where each case is written apart.
      throw new Error('alternatives must be written by their entry or item');
  }
}

function listLines(node: Extract<TemplateNode, { kind: 'list' }>, indent: number): string[] {
  const pad = ' '.repeat(indent);
  return grouped(node.items, indent, (item) => {
    const cases: Item[] = item.node.kind === 'alternatives' ? [...item.node.cases] : [{ node: item.node }];
    return cases.flatMap((c) => conditional(c.when, indent, itemLines(pad, c.node, indent)));
  });
}

/** One list item: `- scalar`, or a map whose first plain entry shares the dash's line. */
function itemLines(pad: string, node: TemplateNode, indent: number): string[] {
  if (node.kind !== 'map' || node.entries.length === 0) return valueLines(`${pad}-`, node, indent);
  const [first = '', ...rest] = mapLines(node, indent + 2);
  if (first.trimStart().startsWith('{{')) return [`${pad}-`, first, ...rest];
  return [`${pad}- ${first.slice(indent + 2)}`, ...rest];
}

function keyText(key: string): string {
  return stringify(key).trimEnd();
}

/**
 * Literal text with Helm's delimiters in it (a Prometheus alert's `{{ $labels.name }}`, a Grafana
 * legend's `{{pod}}`) written as actions that print them, so Helm renders the text unchanged.
 */
function literalDelimiters(yamlText: string): string {
  return yamlText.replace(/\{\{|\}\}/g, (d) => `{{ "${d}" }}`);
}

/**
 * A scalar: literals as YAML writes them; with actions, a double-quoted string (its literal parts
 * escaped) or, for numbers and booleans, the bare text Helm renders.
 */
function scalarText(node: Extract<TemplateNode, { kind: 'scalar' }>): string {
  if (node.parts.every((p): p is { text: string } => 'text' in p)) {
    const text = node.parts.map((p) => p.text).join('');
    if (node.type === 'string' && text.includes('\n')) return literalDelimiters(JSON.stringify(text));
    const value: unknown = node.type === 'string' ? text : node.type === 'null' ? null : JSON.parse(text);
    return literalDelimiters(stringify(value, { lineWidth: 0 }).trimEnd());
  }
  const escape = (s: string) => literalDelimiters(JSON.stringify(s).slice(1, -1));
  const text = (p: Part) => ('action' in p ? `{{ ${p.action} }}` : node.type === 'string' ? escape(p.text) : p.text);
  const joined = node.parts.map(text).join('');
  return node.type === 'string' ? `"${joined}"` : joined;
}
