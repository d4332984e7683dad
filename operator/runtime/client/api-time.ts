/** Microsecond precision, as metav1.MicroTime (Event `eventTime`, Lease `renewTime`) wants. */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
