const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/**
 * The value of a Kubernetes quantity ("500Mi", "1Gi", "500M", "100m", "1e3") as a number, so
 * sizes can be compared at synth time. Throws on anything that is not a quantity.
 */
export function parseQuantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei)|([numkMGTPE]?)|[eE]([+-]?\d+))$/.exec(q.trim());
  if (!m) throw new Error(`${JSON.stringify(q)} is not a Kubernetes quantity; use forms like 500Mi, 1Gi, 500M`);
  const n = Number(m[1]);
  if (m[2]) return n * BINARY[m[2]];
  if (m[4] !== undefined) return n * 10 ** Number(m[4]);
  return n * DECIMAL[m[3] ?? ''];
}
