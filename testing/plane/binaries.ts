/**
 * Where the plane's binaries come from: KUBEBUILDER_ASSETS, or the cache outside the repository,
 * filled with the projects' checked release binaries or built from their Go modules.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runBuildScript } from '../build-script';
import { log } from './process';
import {
  cacheDirectory,
  fetchReleaseBinaries,
  isCompleteCache,
  mirrorSources,
  PUBLISHED_SOURCES,
  releasePlatform,
  releaseVersions,
} from '../release-binaries';

/** The testing folder: its build script and kwok stages sit there (and in lib/testing when compiled). */
export const HARNESS_DIR = path.resolve(__dirname, '..');

export interface ControlPlaneBinaries {
  readonly dir: string;
  readonly etcd: string;
  readonly kubeApiserver: string;
  /** Absent when KUBEBUILDER_ASSETS has none: no garbage collection or workload controllers then. */
  readonly kubeControllerManager?: string;
  /** Absent when KUBEBUILDER_ASSETS has none: pods are then never scheduled. */
  readonly kubeScheduler?: string;
  /** kwok and the directory of its stages: simulated kubelets, so scheduled pods run. */
  readonly kwok?: { readonly bin: string; readonly stages: string };
  /** e.g. v1.33.13 */
  readonly version: string;
  /** How the binaries were found: 'KUBEBUILDER_ASSETS', 'cache', 'downloaded' or 'built'. */
  readonly source: string;
}

/** Finds (or builds and caches) the control-plane binaries. */
export function resolveBinaries(verbose = true): ControlPlaneBinaries {
  const assets = process.env.KUBEBUILDER_ASSETS;
  if (assets) {
    const need = (name: string) => {
      const p = path.join(assets, name);
      if (!fs.existsSync(p)) throw new Error(`KUBEBUILDER_ASSETS=${assets} has no ${name}`);
      return p;
    };
    const optional = (name: string) => (fs.existsSync(path.join(assets, name)) ? path.join(assets, name) : undefined);
    const apiserver = need('kube-apiserver');
    return {
      dir: assets,
      etcd: need('etcd'),
      kubeApiserver: apiserver,
      kubeControllerManager: optional('kube-controller-manager'),
      kubeScheduler: optional('kube-scheduler'),
      kwok: kwokIn(assets),
      version: binaryVersion(apiserver),
      source: 'KUBEBUILDER_ASSETS',
    };
  }
  const started = Date.now();
  // The script prints the cache directory last.
  const dir = runBuildScript('build-control-plane.sh', verbose);
  const apiserver = path.join(dir, 'kube-apiserver');
  return {
    dir,
    etcd: path.join(dir, 'etcd'),
    kubeApiserver: apiserver,
    kubeControllerManager: path.join(dir, 'kube-controller-manager'),
    kubeScheduler: path.join(dir, 'kube-scheduler'),
    kwok: kwokIn(dir),
    version: binaryVersion(apiserver),
    source: Date.now() - started > 30_000 ? 'built' : 'cache',
  };
}

/**
 * Fills the cache with the projects' release binaries, each checked against its published
 * SHA-256, when it is not complete: true when it did. False, saying why, when there is nothing to
 * do or it cannot (offline, a platform without releases, a failed check): the build then fills it.
 */
export async function downloadBinaries(verbose = true): Promise<boolean> {
  if (process.env.KUBEBUILDER_ASSETS || process.env.OPKIT_RELEASE_DOWNLOAD === 'off') return false;
  const versions = releaseVersions();
  const dir = cacheDirectory(versions);
  if (isCompleteCache(dir, versions)) return false;
  const platform = releasePlatform();
  if (!platform) {
    log(verbose, `no release binaries are published for ${process.platform}/${process.arch}: building them`);
    return false;
  }
  const mirror = process.env.OPKIT_RELEASE_MIRROR;
  const started = Date.now();
  log(verbose, `downloading Kubernetes ${versions.kubernetes}, etcd and kwok from ${mirror ?? 'their releases'}`);
  try {
    await fetchReleaseBinaries(dir, versions, mirror ? mirrorSources(mirror) : PUBLISHED_SOURCES, platform);
  } catch (err) {
    log(verbose, `${err instanceof Error ? err.message : String(err)}; building from the Go module proxy instead`);
    return false;
  }
  log(verbose, `downloaded and verified in ${((Date.now() - started) / 1000).toFixed(1)}s: ${dir}`);
  return true;
}

/** kwok and its stages (a `kwok-stages` directory beside it), when both are there. */
function kwokIn(dir: string): ControlPlaneBinaries['kwok'] {
  const bin = path.join(dir, 'kwok');
  const stages = path.join(dir, 'kwok-stages');
  return fs.existsSync(bin) && fs.existsSync(stages) ? { bin, stages } : undefined;
}

function binaryVersion(apiserver: string): string {
  const out = execFileSync(apiserver, ['--version'], { encoding: 'utf8' });
  return out.trim().split(/\s+/).pop() ?? 'unknown';
}
