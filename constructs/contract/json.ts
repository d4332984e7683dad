/** A JSON object (not null, not a list): a type guard, so that its fields read as `unknown`. */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
