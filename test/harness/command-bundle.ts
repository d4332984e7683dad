import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Plugin } from 'esbuild';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * The package's command (`command/cli.ts`) bundled once for the run, for the tests that start it
 * again and again: a start then loads one file, where `node --import tsx` first registers tsx
 * (its loader thread among it) and looks each source up in its cache, about 0.5 s of CPU more per
 * start. The bundle is of the same sources; packages stay out of it and are required from the
 * repository's node_modules, which a link beside the bundle leads to. Returns the bundle's path;
 * the run's temporary directory holds it.
 */
export async function bundleTestCommand(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-command-'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const outfile = path.join(dir, 'cli.js');
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [path.join(ROOT, 'command', 'cli.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    sourcemap: 'inline',
    logLevel: 'warning',
    plugins: [ownPaths],
  });
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
