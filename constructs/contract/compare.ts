/**
 * Orders strings by UTF-16 code unit, as `Array.prototype.sort` does. For names, versions and
 * timestamps: `localeCompare` would load ICU's collation tables, about 3 MiB of a reconciler's
 * resident memory, for ASCII that sorts the same either way.
 */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
