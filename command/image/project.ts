/**
 * What an image says about the project it is built from, read from its package.json and git:
 * the defaults of `cdk8s-operator-kit image`.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ImageDescription } from './definition';
import { jsonAt, parseJson, stringAt } from '../../constructs/contract/json';

interface PackageJson {
  name?: string;
  version?: string;
  description?: string;
  license?: string;
  homepage?: string;
  repository?: string | { url?: string };
}

function git(cwd: string, args: string[]): string | undefined {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

export function readPackageJson(cwd: string): PackageJson {
  const file = path.join(cwd, 'package.json');
  if (!fs.existsSync(file)) return {};
  const pkg = parseJson(fs.readFileSync(file, 'utf8'));
  const repository = jsonAt(pkg, 'repository');
  return {
    name: stringAt(pkg, 'name'),
    version: stringAt(pkg, 'version'),
    description: stringAt(pkg, 'description'),
    license: stringAt(pkg, 'license'),
    homepage: stringAt(pkg, 'homepage'),
    repository: typeof repository === 'string' ? repository : { url: stringAt(repository, 'url') },
  };
}

/**
 * The time every file and the image carry: `SOURCE_DATE_EPOCH` when set (the reproducible-builds
 * convention), else the last commit's time, else the epoch itself (as ko does).
 */
export function sourceDateEpoch(cwd: string): number {
  const fromEnv = process.env.SOURCE_DATE_EPOCH;
  if (fromEnv && /^\d+$/.test(fromEnv)) return Number(fromEnv);
  const committed = git(cwd, ['log', '-1', '--format=%ct']);
  return committed && /^\d+$/.test(committed) ? Number(committed) : 0;
}

/** The commit the sources are at, marked `-dirty` when tracked files differ from it. */
export function sourceRevision(cwd: string): string | undefined {
  const head = git(cwd, ['rev-parse', 'HEAD']);
  if (!head) return undefined;
  const changed = git(cwd, ['status', '--porcelain', '--untracked-files=no']);
  return changed ? `${head}-dirty` : head;
}

function sourceUrl(pkg: PackageJson, name: string, version: string): string {
  const repo = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  return repo ?? pkg.homepage ?? `https://www.npmjs.com/package/${name}/v/${version}`;
}

/** The image's reference and labels by default, from the project at `cwd`. */
export function describeProject(cwd: string): { reference: string; description: ImageDescription } {
  const pkg = readPackageJson(cwd);
  const name = pkg.name ?? path.basename(cwd);
  const version = pkg.version ?? '0.0.0';
  return {
    // The kit's own: cdk8s-operator-kit/reconciler:<version>, what the operator constructs name.
    reference: `${name.replace(/^@/, '')}/reconciler:${version}`,
    description: {
      title: name,
      description: pkg.description,
      version,
      revision: sourceRevision(cwd),
      source: sourceUrl(pkg, name, version),
      licenses: pkg.license ?? 'NOASSERTION',
      created: sourceDateEpoch(cwd),
    },
  };
}
