import { isJsonObject } from '../contract/json';
import type { JsonSchema } from './schema';

/**
 * What the API server's schema validation would refuse in a value, offline: types, required
 * fields, unknown fields (kubectl's strict field validation), enums, patterns, lengths, bounds
 * and item counts — each message naming the field, in the API server's words. CEL rules are not
 * evaluated; a schema default counts as present. For samples and examples checked at synth, so a
 * bad one fails there rather than at `kubectl apply`.
 */
// eslint-disable-next-line complexity -- one case per JSON schema type, as the API server validates them
export function schemaViolations(schema: JsonSchema, value: unknown, path: string): string[] {
  if (value === null) return schema.nullable ? [] : [`${path}: Invalid value: null: must not be null`];
  if (schema['x-kubernetes-int-or-string']) {
    if (typeof value === 'number' && Number.isInteger(value)) return bounds(schema, value, path);
    if (typeof value !== 'string') return [invalid(path, value, 'must be an integer or a string')];
    return strings(schema, value, path);
  }
  switch (schema.type) {
    case 'object':
      if (!isJsonObject(value)) return [invalid(path, value, 'must be of type object')];
      return objects(schema, value, path);
    case 'array':
      if (!Array.isArray(value)) return [invalid(path, value, 'must be of type array')];
      return arrays(schema, value, path);
    case 'string':
      return typeof value === 'string'
        ? strings(schema, value, path)
        : [invalid(path, value, 'must be of type string')];
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value)
        ? bounds(schema, value, path)
        : [invalid(path, value, 'must be of type integer')];
    case 'number':
      return typeof value === 'number' ? bounds(schema, value, path) : [invalid(path, value, 'must be of type number')];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [invalid(path, value, 'must be of type boolean')];
    default:
      return [];
  }
}

// eslint-disable-next-line complexity -- required, minProperties, declared, additional and unknown fields: the object rules of the API server's validator, in its order
function objects(s: JsonSchema, v: Record<string, unknown>, path: string): string[] {
  const out: string[] = [];
  for (const name of s.required ?? []) {
    if (v[name] === undefined && s.properties?.[name]?.default === undefined)
      out.push(`${path}.${name}: Required value`);
  }
  if (s.minProperties !== undefined && Object.keys(v).length < s.minProperties)
    out.push(`${path}: Invalid value: must have at least ${s.minProperties} properties`);
  for (const [name, value] of Object.entries(v)) {
    if (value === undefined) continue;
    const field = `${path}.${name}`;
    const declared =
      s.properties?.[name] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    if (declared) out.push(...schemaViolations(declared, value, field));
    else if (!s['x-kubernetes-preserve-unknown-fields'] && s.additionalProperties !== true && s.properties)
      out.push(`${field}: unknown field`);
  }
  return out;
}

function arrays(s: JsonSchema, v: readonly unknown[], path: string): string[] {
  const out: string[] = [];
  if (s.minItems !== undefined && v.length < s.minItems)
    out.push(`${path}: Invalid value: ${v.length}: must have at least ${s.minItems} items`);
  if (s.maxItems !== undefined && v.length > s.maxItems)
    out.push(`${path}: Too many: ${v.length}: must have at most ${s.maxItems} items`);
  const items = s.items;
  if (items) v.forEach((item, i) => out.push(...schemaViolations(items, item, `${path}[${i}]`)));
  return out;
}

function strings(s: JsonSchema, v: string, path: string): string[] {
  const out: string[] = [];
  if (s.enum && !s.enum.includes(v)) {
    out.push(
      `${path}: Unsupported value: ${JSON.stringify(v)}: supported values: ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`,
    );
  }
  if (s.minLength !== undefined && v.length < s.minLength)
    out.push(invalid(path, v, `should be at least ${s.minLength} chars long`));
  if (s.maxLength !== undefined && v.length > s.maxLength)
    out.push(`${path}: Too long: may not be more than ${s.maxLength} bytes`);
  if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(v))
    out.push(
      invalid(
        path,
        v,
        // A quantity's pattern is unreadable; say what it accepts (the API server shows the pattern).
        s['x-kubernetes-int-or-string']
          ? `must be a quantity: a number with an optional suffix, like 512Mi, 2Gi, 1.5 or 500m`
          : `should match '${s.pattern}'`,
      ),
    );
  if (s.format === 'date-time' && Number.isNaN(Date.parse(v))) out.push(invalid(path, v, 'must be a date-time'));
  return out;
}

function bounds(s: JsonSchema, v: number, path: string): string[] {
  const out: string[] = [];
  if (s.enum && !s.enum.includes(v)) out.push(`${path}: Unsupported value: ${v}`);
  if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum))
    out.push(invalid(path, v, `should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`));
  if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum))
    out.push(invalid(path, v, `should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`));
  return out;
}

function invalid(path: string, v: unknown, why: string): string {
  return `${path}: Invalid value: ${JSON.stringify(v)}: ${why}`;
}
