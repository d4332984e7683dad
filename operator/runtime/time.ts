/** Whole seconds, as metav1.Time serializes; sub-second noise would make every status differ. */
export function rfc3339(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`;
}

/** Microsecond precision, as metav1.MicroTime (Event `eventTime`, Lease `renewTime`) wants. */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
