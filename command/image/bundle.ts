/**
 * Bundles a reconciler entry point (a file that calls `runOperator`) into one JavaScript file with
 * esbuild, the project's own: the image holds that file and Node, nothing from node_modules.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import type * as esbuildModule from 'esbuild';
import { ImageBuildError } from './tools';

export interface BundleOptions {
  /** The entry point, relative to `cwd`. */
  readonly entry: string;
  /** The bundle to write; its source map and legal comments go beside it. */
  readonly outfile: string;
  /** The project whose esbuild and node_modules are used. @default process.cwd() */
  readonly cwd?: string;
  /** Minify (names stay readable without it, e.g. for a CPU profile). @default true */
  readonly minify?: boolean;
  /**
   * Leave every package (`cdk8s`, `constructs`, `cdk8s-plus-*`, the kit) out of the bundle, to be
   * required from the project's node_modules when it runs: for a module loaded into a process
   * that already holds them, which must share their one copy. @default false (the image's bundle
   * holds everything)
   */
  readonly externalPackages?: boolean;
}

type Esbuild = typeof esbuildModule;

function loadEsbuild(cwd: string): Esbuild {
  const requireFromProject = createRequire(path.join(cwd, 'package.json'));
  try {
    return requireFromProject('esbuild') as Esbuild;
  } catch {
    throw new ImageBuildError(`esbuild is needed to bundle the reconciler: npm install --save-dev esbuild (in ${cwd})`);
  }
}

/** Writes the bundle and returns its size in bytes (without the source map). */
export async function bundleReconciler(options: BundleOptions): Promise<number> {
  const cwd = options.cwd ?? process.cwd();
  const entry = path.resolve(cwd, options.entry);
  if (!fs.existsSync(entry)) throw new ImageBuildError(`the entry point ${entry} does not exist`);
  const esbuild = loadEsbuild(cwd);
  await esbuild.build({
    absWorkingDir: cwd,
    entryPoints: [entry],
    outfile: path.resolve(cwd, options.outfile),
    bundle: true,
    platform: 'node',
    // The image runs Node 22; tests run the same bundle on the machine's Node 20.
    target: 'node20',
    format: 'cjs',
    minify: options.minify ?? true,
    sourcemap: 'linked',
    legalComments: 'linked',
    logLevel: 'warning',
    // pg's native binding (libpq), which pg loads only when asked for by `pg.native`: never here.
    external: ['pg-native'],
    ...(options.externalPackages ? { packages: 'external' as const } : {}),
  });
  return fs.statSync(path.resolve(cwd, options.outfile)).size;
}
