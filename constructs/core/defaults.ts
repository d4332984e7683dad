import { isJsonObject } from '../contract/json';
import type { JsonSchema } from './schema';

/**
 * A value with its schema's defaults filled in, as the API server does before it stores an
 * object (structural defaulting): an absent field with a `default` gets it, and the defaults
 * inside that default (and inside every present object, list item and map value) apply too.
 * For what renders a resource offline exactly as the reconciler, which reads stored objects,
 * would. The value given is not changed.
 */
export function withSchemaDefaults(schema: JsonSchema, value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = schema.items;
    return items ? value.map((v) => withSchemaDefaults(items, v)) : value;
  }
  if (!isJsonObject(value)) return value;
  const out: Record<string, unknown> = { ...value };
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (out[name] === undefined && property.default !== undefined) out[name] = structuredClone(property.default);
    if (out[name] !== undefined) out[name] = withSchemaDefaults(property, out[name]);
  }
  const values = schema.additionalProperties;
  if (typeof values === 'object') {
    for (const [name, v] of Object.entries(out)) {
      if (!schema.properties?.[name]) out[name] = withSchemaDefaults(values, v);
    }
  }
  return out;
}
