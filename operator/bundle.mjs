// Bundles the reconciler into one file for the container image: build/reconciler/main.js
// (or the path given as the first argument).
import { build } from 'esbuild';

const outfile = process.argv[2] ?? 'build/reconciler/main.js';

const result = await build({
  entryPoints: ['operator/main.ts'],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: true,
  sourcemap: 'linked',
  legalComments: 'linked',
  metafile: true,
  logLevel: 'warning',
});
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
console.log(`${outfile}: ${(bytes / 1024 / 1024).toFixed(1)} MiB (with source map)`);
