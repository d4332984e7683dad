/**
 * Where a sampled heap profile's bytes were allocated (see bench/alloc-sites-probe.cjs): each
 * function's own bytes, and the bytes allocated under the functions named on the command line
 * (inclusive), as shares of the whole.
 *
 *   node --import tsx bench/alloc-sites.ts /tmp/sites.heapprofile [function names...]
 */
import * as fs from 'node:fs';

interface ProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}

const [file, ...watched] = process.argv.slice(2);
if (!file) throw new Error('usage: alloc-sites.ts <profile> [function names...]');
const head = (JSON.parse(fs.readFileSync(file, 'utf8')) as { head: ProfileNode }).head;

const self = new Map<string, number>();
const under = new Map<string, number>(watched.map((w) => [w, 0]));
let total = 0;

/** Walks the tree once; `above` holds the watched names on the path from the root. */
function walk(node: ProfileNode, above: ReadonlySet<string>): void {
  const { functionName, url, lineNumber } = node.callFrame;
  const name = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
  const path = under.has(functionName) ? new Set([...above, functionName]) : above;
  total += node.selfSize;
  self.set(name, (self.get(name) ?? 0) + node.selfSize);
  for (const w of path) under.set(w, (under.get(w) ?? 0) + node.selfSize);
  for (const child of node.children) walk(child, path);
}
walk(head, new Set());

const share = (bytes: number) => `${((100 * bytes) / total).toFixed(1).padStart(5)} %`;
console.log(`sampled bytes: ${(total / 2 ** 20).toFixed(1)} MiB`);
console.log('\nby function (own allocations):');
for (const [name, bytes] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${share(bytes)}  ${name}`);
if (watched.length) {
  console.log('\nunder (inclusive):');
  for (const [name, bytes] of under) console.log(`${share(bytes)}  ${name}`);
}
