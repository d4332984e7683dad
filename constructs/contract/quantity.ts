/**
 * The value of a Kubernetes quantity ("500Mi", "1Gi", "500M", "100m", "1e3") as a number, so
 * sizes can be compared at synth time. Throws on anything that is not a quantity.
 */
export function parseQuantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const nanos = quantityNanos(q);
  if (nanos === undefined)
    throw new Error(`${JSON.stringify(q)} is not a Kubernetes quantity; use forms like 500Mi, 1Gi, 500M`);
  return Number(nanos) / 1e9;
}

/** The binary suffixes, each with its power of two. */
export const BINARY_EXPONENT: Readonly<Record<string, bigint | undefined>> = {
  Ki: 10n,
  Mi: 20n,
  Gi: 30n,
  Ti: 40n,
  Pi: 50n,
  Ei: 60n,
};
/** The decimal suffixes (none for units), each with its power of ten. */
export const DECIMAL_EXPONENT: Readonly<Record<string, number | undefined>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

/**
 * The exact value of a quantity in nano-units (10⁻⁹), rounded up as the API server rounds
 * anything finer; undefined when it is not a quantity. "2048Mi" and "2Gi", "0.5" and "500m",
 * 1 and "1" have the same value: the API server stores each in one canonical spelling, so
 * comparing what was written with what is stored must compare these.
 */
// eslint-disable-next-line complexity -- a parser of the quantity grammar (sign, digits, fraction, exponent, suffix): one branch per form, as apimachinery's ParseQuantity
export function quantityNanos(q: string | number): bigint | undefined {
  const text = typeof q === 'number' ? (Number.isInteger(q) ? String(q) : undefined) : q.trim();
  if (text === undefined) return undefined;
  const m = /^([+-]?)(\d+)?(?:\.(\d*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([numkMGTPE])|[eE]([+-]?\d+))?$/.exec(text);
  if (!m || (m[2] === undefined && !m[3])) return undefined;
  const [, sign, whole = '', fraction = '', binary, decimal, exponent] = m;
  let numerator = BigInt(`${whole}${fraction}` || '0');
  let exp10 = -fraction.length + 9;
  if (binary) numerator <<= BINARY_EXPONENT[binary] ?? 0n;
  else if (exponent !== undefined) exp10 += Number(exponent);
  else exp10 += DECIMAL_EXPONENT[decimal ?? ''] ?? 0;
  // Huge exponents are not worth a number of millions of digits: no real quantity has one.
  if (Math.abs(exp10) > 400) return undefined;
  let nanos: bigint;
  if (exp10 >= 0) nanos = numerator * 10n ** BigInt(exp10);
  else {
    const divisor = 10n ** BigInt(-exp10);
    nanos = numerator / divisor + (numerator % divisor === 0n ? 0n : 1n);
  }
  return sign === '-' ? -nanos : nanos;
}

/** Whether two quantities have the same value (see quantityNanos); false when either is not one. */
export function sameQuantity(a: string | number, b: string | number): boolean {
  const x = quantityNanos(a);
  return x !== undefined && x === quantityNanos(b);
}
