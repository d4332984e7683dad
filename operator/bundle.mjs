// Bundles a reconciler entry point into one file, as operator/Dockerfile does:
//   node operator/bundle.mjs [outfile] [entry]
// (default build/reconciler/main.js from operator/main.ts, the kit's image).
import { build } from 'esbuild';

const outfile = process.argv[2] ?? 'build/reconciler/main.js';
const entry = process.argv[3] ?? 'operator/main.ts';

const result = await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  // Node 20 is what these machines run; the image runs Node 22.
  target: 'node20',
  format: 'cjs',
  // OPKIT_BUNDLE_MINIFY=0 keeps names readable, e.g. for a CPU profile.
  minify: process.env.OPKIT_BUNDLE_MINIFY !== '0',
  sourcemap: 'linked',
  legalComments: 'linked',
  metafile: true,
  logLevel: 'warning',
});
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
console.log(`${outfile}: ${(bytes / 1024 / 1024).toFixed(1)} MiB (with source map)`);
