/**
 * Builds the kit's language packages with jsii: the facade in jsii/src, compiled by jsii against
 * the packed kit (bundled in it, so one implementation runs in every language, and cdk8s-plus-27
 * with it: no language needs its own copy), then packaged by jsii-pacmak for each target — a
 * Python wheel, and a Java jar in a Maven repository of its own (jsii-pacmak builds it with
 * Maven). `npm run package:jsii` runs it; the languages test builds with it.
 *
 * Everything happens in a directory of its own (the facade's package.json with the packed kit as
 * its dependency, jsii and jsii-pacmak at the versions pinned here): nothing of it lands in the
 * repository. Go's package is not built: this machine's Go module proxy serves no cdk8s Go module,
 * so `go mod tidy` (which jsii-pacmak runs) cannot finish it here: see docs/languages.md.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

const JSII_DIR = __dirname;

/** The toolchain, pinned: jsii 5.9 compiles with the project's TypeScript 5.9. */
export const JSII_TOOLS = { jsii: '5.9.50', 'jsii-pacmak': '1.140.0' } as const;

/** The targets built unless told otherwise. */
export const JSII_TARGETS: readonly string[] = ['python', 'java'];

export interface JsiiBuild {
  /** The Python wheel. */
  readonly wheel: string;
  /** The Maven repository jsii-pacmak wrote the Java jar and its pom to (`dist/java`), when Java was built. */
  readonly mavenRepository?: string;
  /** The directory jsii-pacmak wrote each target's package under. */
  readonly dist: string;
}

/**
 * Stages the facade in `workDir` with the packed kit (`kitTarball`) and the peer versions the
 * repository itself uses, compiles it with jsii and packages it for `targets`.
 */
export function buildJsiiPackages(options: {
  readonly kitTarball: string;
  readonly workDir: string;
  readonly targets?: readonly string[];
}): JsiiBuild {
  const { workDir } = options;
  fs.rmSync(workDir, { recursive: true, force: true });
  fs.mkdirSync(workDir, { recursive: true });
  fs.cpSync(path.join(JSII_DIR, 'src'), path.join(workDir, 'src'), { recursive: true });
  fs.copyFileSync(path.join(JSII_DIR, 'README.md'), path.join(workDir, 'README.md'));
  fs.copyFileSync(path.join(JSII_DIR, '..', 'LICENSE'), path.join(workDir, 'LICENSE'));
  const manifest = JSON.parse(fs.readFileSync(path.join(JSII_DIR, 'package.json'), 'utf8')) as Manifest;
  const kitVersion = manifest.dependencies['cdk8s-operator-kit'] ?? '';
  // Installed from the packed kit, then named by its version, as jsii reads a dependency's version.
  // The peers are compiled against at the versions the repository uses; the packages ask for the
  // lowest the facade supports (its peerDependencies), e.g. what Maven Central serves.
  writeManifest(workDir, {
    ...manifest,
    dependencies: { ...manifest.dependencies, 'cdk8s-operator-kit': `file:${options.kitTarball}` },
    devDependencies: { ...peerVersions(manifest), ...JSII_TOOLS },
  });
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], workDir);
  writeManifest(workDir, {
    ...manifest,
    dependencies: { ...manifest.dependencies, 'cdk8s-operator-kit': kitVersion },
    devDependencies: { ...peerVersions(manifest), ...JSII_TOOLS },
  });
  // C# reserved words (`namespace`) are the TypeScript props' own names: jsii-pacmak escapes them.
  run('npx', ['jsii', '--fail-on-warnings', '--silence-warnings=reserved-word'], workDir);
  const targets = options.targets ?? JSII_TARGETS;
  run('npx', ['jsii-pacmak', '--targets', ...targets], workDir);
  const built = builtIn(workDir, targets);
  if (!built) throw new Error(`jsii-pacmak did not write every package of ${targets.join(', ')} in ${workDir}/dist`);
  return built;
}

/**
 * `buildJsiiPackages`, kept in `cacheDir` by what it is built from (the packed kit's bytes, the
 * facade, this file, the toolchain and peer versions, the targets): a second build of the same
 * inputs is the first one's packages, found in a moment instead of built again (a minute). Only
 * the packages are kept (`dist/`), and only the newest two builds.
 */
export function cachedJsiiBuild(options: {
  readonly kitTarball: string;
  readonly cacheDir: string;
  readonly targets?: readonly string[];
}): JsiiBuild {
  const targets = options.targets ?? JSII_TARGETS;
  const dir = path.join(options.cacheDir, `jsii-${buildInputsDigest(options.kitTarball, targets)}`);
  const found = builtIn(dir, targets);
  if (found) {
    const now = new Date();
    fs.utimesSync(dir, now, now);
    return found;
  }
  fs.mkdirSync(options.cacheDir, { recursive: true });
  const work = fs.mkdtempSync(path.join(options.cacheDir, 'jsii-building-'));
  try {
    const built = buildJsiiPackages({ kitTarball: options.kitTarball, workDir: path.join(work, 'stage'), targets });
    fs.cpSync(built.dist, path.join(work, 'dist'), { recursive: true });
    fs.rmSync(path.join(work, 'stage'), { recursive: true, force: true });
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(work, dir);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  pruneBuilds(options.cacheDir);
  const kept = builtIn(dir, targets);
  if (!kept) throw new Error(`the packages of ${targets.join(', ')} are not all in ${dir} after building them`);
  return kept;
}

/** The packages a build directory holds (its `dist/`), if every one of `targets` is there. */
function builtIn(dir: string, targets: readonly string[]): JsiiBuild | undefined {
  const dist = path.join(dir, 'dist');
  const python = path.join(dist, 'python');
  const wheel = fs.existsSync(python) ? fs.readdirSync(python).find((f) => f.endsWith('.whl')) : undefined;
  const java = path.join(dist, 'java');
  const jar =
    fs.existsSync(java) &&
    fs.readdirSync(java, { recursive: true, encoding: 'utf8' }).some((f) => /cdk8s-operator-kit-[\d.]+\.jar$/.test(f));
  if (!wheel || (targets.includes('java') && !jar)) return undefined;
  return { wheel: path.join(python, wheel), dist, ...(jar ? { mavenRepository: java } : {}) };
}

/** What a build is made from, as a digest (see `cachedJsiiBuild`). */
function buildInputsDigest(kitTarball: string, targets: readonly string[]): string {
  const hash = createHash('sha256');
  hash.update(fs.readFileSync(kitTarball));
  const src = path.join(JSII_DIR, 'src');
  for (const file of fs.readdirSync(src, { recursive: true, encoding: 'utf8' }).sort()) {
    const full = path.join(src, file);
    if (fs.statSync(full).isFile()) hash.update(file).update(fs.readFileSync(full));
  }
  for (const file of ['package.json', 'README.md', 'build.ts']) hash.update(fs.readFileSync(path.join(JSII_DIR, file)));
  const manifest = JSON.parse(fs.readFileSync(path.join(JSII_DIR, 'package.json'), 'utf8')) as Manifest;
  hash.update(JSON.stringify([JSII_TOOLS, peerVersions(manifest), targets]));
  return hash.digest('hex').slice(0, 16);
}

/** Removes all but the newest two cached builds. */
function pruneBuilds(cacheDir: string): void {
  const builds = fs
    .readdirSync(cacheDir)
    .filter((name) => /^jsii-[0-9a-f]{16}$/.test(name))
    .map((name) => ({ name, mtimeMs: fs.statSync(path.join(cacheDir, name)).mtimeMs }))
    .sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const old of builds.slice(2)) fs.rmSync(path.join(cacheDir, old.name), { recursive: true, force: true });
}

interface Manifest {
  readonly dependencies: Record<string, string>;
  readonly peerDependencies: Record<string, string>;
  readonly [key: string]: unknown;
}

/** The peers (cdk8s, cdk8s-plus-27, constructs) at the versions the repository has installed. */
function peerVersions(manifest: Manifest): Record<string, string> {
  return Object.fromEntries(
    Object.keys(manifest.peerDependencies).map((name) => [name, installedVersion(name)] as const),
  );
}

/** The version of a package installed in the repository. */
export function installedVersion(name: string): string {
  const file = path.join(JSII_DIR, '..', 'node_modules', name, 'package.json');
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
}

function writeManifest(dir: string, manifest: object): void {
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

function run(command: string, args: readonly string[], cwd: string): void {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed (${r.status}) in ${cwd}:\n${r.stdout}\n${r.stderr}`);
}
