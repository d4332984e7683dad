/**
 * A generator's output (typedoc, `cdk8s import`), reused while every input is byte for byte the
 * same. Both are deterministic functions of their inputs, so an output made from the same inputs
 * is the fresh output; the freshness tests then cost a hash on a warm machine instead of ten
 * seconds of CPU each. A clean clone has no cache and generates.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readTree } from './synth';

const ROOT = path.resolve(__dirname, '..', '..');
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'opkit-generated');

/**
 * A digest of the files named (directories walked, node_modules skipped), by content and by path
 * within the input (a temp directory's own name does not count).
 */
export function inputsDigest(inputs: readonly string[]): string {
  const hash = createHash('sha256').update(`${process.version}\n`);
  const add = (p: string, name: string) => {
    if (fs.statSync(p).isDirectory()) {
      for (const e of fs.readdirSync(p).sort()) if (e !== 'node_modules') add(path.join(p, e), `${name}/${e}`);
      return;
    }
    const bytes = fs.readFileSync(p);
    hash.update(`${name}\n${bytes.length}\n`).update(bytes);
  };
  inputs.forEach((input, i) => {
    add(input, String(i));
  });
  return hash.digest('hex').slice(0, 24);
}

/** What `generate` writes into an empty directory, as file contents by path: from the cache when the inputs are unchanged. */
export function generatedOutput(
  name: string,
  inputs: readonly string[],
  generate: (outDir: string) => void,
  cache: string = CACHE,
): Record<string, string> {
  const file = path.join(cache, `${name}-${inputsDigest(inputs)}.json`);
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>;
  const out = fs.mkdtempSync(path.join(os.tmpdir(), `opkit-${name}-`));
  try {
    generate(out);
    const tree = readTree(out);
    fs.mkdirSync(cache, { recursive: true });
    // Only the latest output of each generator is kept: the cache does not grow with every edit.
    for (const old of fs.readdirSync(cache).filter((f) => f.startsWith(`${name}-`)))
      fs.rmSync(path.join(cache, old), { force: true });
    // Renamed into place, so a file another worker reads is whole.
    const partial = `${file}.${process.pid}`;
    fs.writeFileSync(partial, JSON.stringify(tree));
    fs.renameSync(partial, file);
    return tree;
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}
