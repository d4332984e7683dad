/**
 * Reading JSON from outside (a file, a tool's output, a request) field by field, checked: each
 * reader takes the fields it needs and finds out when one is missing or of another type, where a
 * cast would let a wrong document through to fail somewhere else.
 */

/** A JSON object (not null, not a list): a type guard, so that its fields read as `unknown`. */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `text` parsed, as a value still to be checked. */
export function parseJson(text: string): unknown {
  return JSON.parse(text);
}

/** The value at `path` (object keys, list indexes) in `v`; undefined where the path leads nowhere. */
export function jsonAt(v: unknown, ...path: readonly (string | number)[]): unknown {
  let at = v;
  for (const step of path) {
    if (typeof step === 'number' && Array.isArray(at)) at = at[step];
    else if (typeof step === 'string' && isJsonObject(at)) at = at[step];
    else return undefined;
  }
  return at;
}

/** The string at `path`, or undefined when there is none (or something else is there). */
export function stringAt(v: unknown, ...path: readonly (string | number)[]): string | undefined {
  const at = jsonAt(v, ...path);
  return typeof at === 'string' ? at : undefined;
}

/** The number at `path`, or undefined when there is none (or something else is there). */
export function numberAt(v: unknown, ...path: readonly (string | number)[]): number | undefined {
  const at = jsonAt(v, ...path);
  return typeof at === 'number' ? at : undefined;
}

/** The list at `path`, or an empty one when there is none (or something else is there). */
export function listAt(v: unknown, ...path: readonly (string | number)[]): readonly unknown[] {
  const at = jsonAt(v, ...path);
  return Array.isArray(at) ? at : [];
}

/** The strings of the list at `path`, anything else in it left out. */
export function stringsAt(v: unknown, ...path: readonly (string | number)[]): string[] {
  return listAt(v, ...path).filter((s): s is string => typeof s === 'string');
}

/** Whether an object's `status.conditions` has `type` with status "True" (a Node's Ready, a CRD's Established). */
export function conditionTrue(v: unknown, type: string): boolean {
  return listAt(v, 'status', 'conditions').some(
    (c) => stringAt(c, 'type') === type && stringAt(c, 'status') === 'True',
  );
}
