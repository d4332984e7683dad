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
    const intOrString = s['x-kubernetes-int-or-string'] === true;
    const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
    if (!s.type && !intOrString && !preserve) {
      problems.push(`${at}: has no type; set type (or x-kubernetes-int-or-string for quantities)`);
    }
    if (s.type === 'object') {
      if (s.properties && s.additionalProperties !== undefined && s.additionalProperties !== false) {
        problems.push(`${at}: has both properties and additionalProperties; use one`);
      }
      if (!s.properties && s.additionalProperties === undefined && !preserve && at.split('.').pop() !== 'metadata') {
        problems.push(
          `${at}: object lists no properties; add properties, additionalProperties, or x-kubernetes-preserve-unknown-fields`,
        );
      }
    }
    if (s.type === 'array') {
      if (!s.items) problems.push(`${at}: array has no items schema`);
    }
    if (s.type !== 'array' && s.items) problems.push(`${at}: items given on a non-array`);
    if (s.required) {
      for (const r of s.required) {
        if (!s.properties?.[r]) problems.push(`${at}: requires "${r}" but has no such property`);
      }
    }
    if (s.enum && s.type && s.type !== 'string' && s.type !== 'integer' && s.type !== 'number') {
      problems.push(`${at}: enum on a ${s.type}`);
    }
    for (const [k, child] of Object.entries(s.properties ?? {})) visit(child, `${at === '<root>' ? '' : at}.${k}`);
    if (s.items) visit(s.items, `${at}[]`);
    if (typeof s.additionalProperties === 'object') visit(s.additionalProperties, `${at}{}`);
  };
  visit(schema, path);
  return problems;
}
