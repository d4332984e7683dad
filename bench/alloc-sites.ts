/**
 * Where a sampled heap profile's bytes were allocated (see bench/alloc-sites-probe.cjs): each
 * function's own bytes, and the bytes allocated under the functions named on the command line
 * (inclusive), as shares of the whole. Given a CPU profile (`--cpu-prof`'s `.cpuprofile`), the
 * same for the time sampled in each function.
 *
 *   node --import tsx bench/alloc-sites.ts /tmp/sites.heapprofile [function names...]
 *   node --import tsx bench/alloc-sites.ts /tmp/prof/CPU.….cpuprofile [function names...]
 *
 * An argument `layer=regex` instead names a layer: every sample goes to the layer of the innermost
 * frame on its stack whose function name (or, for Node's own code, its `node:` module) the regex
 * matches, so the layers add up to the whole without counting a sample twice (for example
 * `render=^renderWithWaits$ http=^node:(_http|https|net|tls)`); the samples no layer claims are
 * shown as `(no layer)`.
 */
import * as fs from 'node:fs';

interface ProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}

const [file, ...args] = process.argv.slice(2);
if (!file) throw new Error('usage: alloc-sites.ts <profile> [function names...] [layer=regex...]');
const watched = args.filter((a) => !a.includes('='));
const layers = args
  .filter((a) => a.includes('='))
  .map((a) => ({ name: a.slice(0, a.indexOf('=')), pattern: new RegExp(a.slice(a.indexOf('=') + 1)) }));
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as { head: ProfileNode } | CpuProfile;
const isCpu = 'nodes' in profile;
const head = isCpu ? cpuTree(profile) : profile.head;

interface CpuProfile {
  readonly nodes: readonly (Omit<ProfileNode, 'selfSize' | 'children'> & { id: number; children?: number[] })[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** A CPU profile as a heap profile's tree, each node's `selfSize` the microseconds sampled in it. */
function cpuTree(cpu: CpuProfile): ProfileNode {
  const selfTime = new Map<number, number>();
  cpu.samples.forEach((id, i) => selfTime.set(id, (selfTime.get(id) ?? 0) + (cpu.timeDeltas[i] ?? 0)));
  const byId = new Map(cpu.nodes.map((n) => [n.id, n]));
  const build = (id: number): ProfileNode => {
    const n = byId.get(id);
    if (!n) throw new Error(`node ${id} missing`);
    return { callFrame: n.callFrame, selfSize: selfTime.get(id) ?? 0, children: (n.children ?? []).map(build) };
  };
  const root = cpu.nodes[0];
  if (!root) throw new Error('the CPU profile has no nodes');
  return build(root.id);
}

const self = new Map<string, number>();
const under = new Map<string, number>(watched.map((w) => [w, 0]));
const inLayer = new Map<string, number>();
let total = 0;

/** The layer a frame starts, if any: matched on its function name, or on a `node:` module's url. */
function layerOf(frame: ProfileNode['callFrame']): string | undefined {
  const subject = frame.url.startsWith('node:') ? frame.url : frame.functionName;
  return layers.find((l) => l.pattern.test(subject))?.name;
}

/**
 * Walks the tree once; `above` holds the watched names on the path from the root, `layer` the
 * layer of the innermost frame that has one.
 */
function walk(node: ProfileNode, above: ReadonlySet<string>, outerLayer: string): void {
  const { functionName, url, lineNumber } = node.callFrame;
  const name = `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
  const path = under.has(functionName) ? new Set([...above, functionName]) : above;
  const layer = layerOf(node.callFrame) ?? outerLayer;
  total += node.selfSize;
  self.set(name, (self.get(name) ?? 0) + node.selfSize);
  inLayer.set(layer, (inLayer.get(layer) ?? 0) + node.selfSize);
  for (const w of path) under.set(w, (under.get(w) ?? 0) + node.selfSize);
  for (const child of node.children) walk(child, path, layer);
}
walk(head, new Set(), '(no layer)');

const amountOf = (n: number) => (isCpu ? `${(n / 1e6).toFixed(2)} s` : `${(n / 2 ** 20).toFixed(1)} MiB`);
const share = (bytes: number) => `${((100 * bytes) / total).toFixed(1).padStart(5)} %`;
console.log(
  isCpu ? `sampled time: ${(total / 1e6).toFixed(2)} s` : `sampled bytes: ${(total / 2 ** 20).toFixed(1)} MiB`,
);
console.log(isCpu ? '\nby function (own time):' : '\nby function (own allocations):');
for (const [name, bytes] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${share(bytes)}  ${name}`);
if (watched.length) {
  console.log('\nunder (inclusive):');
  for (const [name, bytes] of under) console.log(`${share(bytes)}  ${name}`);
}
if (layers.length) {
  // A layer named `idle` (a CPU profile's `(idle)`) is shown, and the others as shares of the rest.
  const busy = total - (inLayer.get('idle') ?? 0);
  console.log(`\nby layer (each sample once, to its innermost layer; shares of all but idle, ${amountOf(busy)}):`);
  for (const [name, amount] of [...inLayer].sort((a, b) => b[1] - a[1])) {
    if (name === 'idle') {
      console.log(`(idle: ${amountOf(amount)})`);
      continue;
    }
    console.log(`${((100 * amount) / busy).toFixed(1).padStart(5)} %  ${amountOf(amount).padStart(10)}  ${name}`);
  }
}
