import { type JsonSchema } from './schema';

/**
 * Throws when a schema is not structural in the sense of apiextensions.k8s.io/v1: every node must
 * say its type (or be explicitly int-or-string / preserve-unknown-fields), and an object either
 * lists its properties, describes its values (additionalProperties), or preserves unknown fields.
 * The API server rejects a CRD that breaks these rules; failing at synth says where and why.
 */
export function assertStructural(schema: JsonSchema, where: string, path = '<root>'): void {
  const problems = structuralProblems(schema, path);
  if (problems.length > 0) {
    throw new Error(`${where}: the schema is not structural:\n  - ${problems.join('\n  - ')}`);
  }
}

/** Lists every structural-schema violation, each with the path of the offending node. */
export function structuralProblems(schema: JsonSchema, path = '<root>'): string[] {
  const problems: string[] = [];
  const visit = (s: JsonSchema, at: string) => {
    problems.push(...nodeProblems(s, at));
    for (const [k, child] of Object.entries(s.properties ?? {})) visit(child, `${at === '<root>' ? '' : at}.${k}`);
    if (s.items) visit(s.items, `${at}[]`);
    if (typeof s.additionalProperties === 'object') visit(s.additionalProperties, `${at}{}`);
  };
  visit(schema, path);
  return problems;
}

/** What one node breaks, its children aside. */
function nodeProblems(s: JsonSchema, at: string): string[] {
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const problems: string[] = [];
  if (!s.type && s['x-kubernetes-int-or-string'] !== true && !preserve) {
    problems.push(`${at}: has no type; set type (or x-kubernetes-int-or-string for quantities)`);
  }
  if (s.type === 'object') problems.push(...objectProblems(s, at, preserve));
  problems.push(...itemsProblems(s, at));
  for (const r of s.required ?? []) {
    if (!s.properties?.[r]) problems.push(`${at}: requires "${r}" but has no such property`);
  }
  if (s.enum && s.type && s.type !== 'string' && s.type !== 'integer' && s.type !== 'number') {
    problems.push(`${at}: enum on a ${s.type}`);
  }
  return problems;
}

/** Items only on an array, and always there. */
function itemsProblems(s: JsonSchema, at: string): string[] {
  if (s.type === 'array' && !s.items) return [`${at}: array has no items schema`];
  if (s.type !== 'array' && s.items) return [`${at}: items given on a non-array`];
  return [];
}

/** An object lists its properties, describes its values, or preserves unknown fields — one of them. */
function objectProblems(s: JsonSchema, at: string, preserve: boolean): string[] {
  if (s.properties && s.additionalProperties !== undefined && s.additionalProperties !== false)
    return [`${at}: has both properties and additionalProperties; use one`];
  if (!s.properties && s.additionalProperties === undefined && !preserve && at.split('.').pop() !== 'metadata') {
    return [
      `${at}: object lists no properties; add properties, additionalProperties, or x-kubernetes-preserve-unknown-fields`,
    ];
  }
  return [];
}
