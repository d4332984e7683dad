/**
 * The repository's TypeScript bundled into one file for a child process to run, in place of
 * `node --import tsx <file>`: a start then loads one file, where tsx first registers itself (its
 * loader thread among it) and looks each source up in its cache, 0.5–1 s of CPU more per start.
 * The bundle is of the same sources. Packages stay out of it and are required from the
 * repository's node_modules, which a link beside the bundle leads to, so that a process holds the
 * one copy of cdk8s, constructs and cdk8s-plus the sources would load.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Plugin } from 'esbuild';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(__dirname, '..', '..');

/** Bundles `entry` (a source of this repository) into `outfile`, with a node_modules link beside it. */
export async function bundleSources(entry: string, outfile: string): Promise<void> {
  fs.mkdirSync(path.dirname(outfile), { recursive: true });
  const link = path.join(path.dirname(outfile), 'node_modules');
  if (!fs.existsSync(link)) fs.symlinkSync(path.join(ROOT, 'node_modules'), link);
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [ownPaths],
  });
}

/** Whether `entry` can be bundled so: a TypeScript source of this repository, not of a package. */
export function isRepositorySource(entry: string): boolean {
  const relative = path.relative(ROOT, entry);
  return (
    path.isAbsolute(entry) &&
    entry.endsWith('.ts') &&
    !relative.startsWith('..') &&
    !relative.split(path.sep).includes('node_modules')
  );
}

/**
 * `entry` bundled once for the run (under its temporary directory), for every test file that
 * starts it: the first to ask writes it, atomically, and the others reuse it.
 */
export async function bundledSource(entry: string): Promise<string> {
  const key = createHash('sha256').update(entry).digest('hex').slice(0, 16);
  const outfile = path.join(os.tmpdir(), 'opkit-sources', key, `${path.basename(entry, '.ts')}.js`);
  if (fs.existsSync(outfile)) return outfile;
  const partial = `${outfile}.${process.pid}.js`;
  await bundleSources(entry, partial);
  fs.renameSync(partial, outfile);
  return outfile;
}

/**
 * Each source keeps its own `__dirname` and `__filename`, which bundling would make the bundle's:
 * the scaffold reads its templates, and the control plane its scripts, from beside themselves.
 * Declared on the source's first line, so that its line numbers stay as they are.
 */
const ownPaths: Plugin = {
  name: 'own-paths',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = await fs.promises.readFile(args.path, 'utf8');
      if (!/\b__(dirname|filename)\b/.test(source)) return undefined;
      const own = `const __dirname = ${JSON.stringify(path.dirname(args.path))}, __filename = ${JSON.stringify(args.path)}; `;
      return { contents: own + source, loader: 'ts' };
    });
  },
};
