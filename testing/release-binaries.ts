/**
 * The control plane's binaries from their projects' published releases, each checked against its
 * published SHA-256 before use — seconds where a build from the Go module proxy takes minutes:
 *
 * - Kubernetes (kube-apiserver, kube-controller-manager, kube-scheduler): the release binaries,
 *   `<kubernetes>/<version>/bin/<os>/<arch>/<name>`, each with `<name>.sha256` beside it;
 * - etcd (and etcdctl, and the previous etcd release for the upgrade tests): the release archive
 *   `<etcd>/<version>/etcd-<version>-<os>-<arch>.tar.gz`, listed in `<etcd>/<version>/SHA256SUMS`;
 * - kwok: the release binary `<kwok>/<version>/kwok-<os>-<arch>`, whose SHA-256 the release's
 *   metadata publishes (`<kwokApi>/<version>`: GitHub's `assets[].digest`); its stages,
 *   `<kwokRaw>/<version>/kustomize/stage/<file>`, checked against the hashes in kwok-stages.ts.
 *
 * Everything goes to a directory beside the cache's, renamed into place only once every file is
 * in and verified: a download that fails, is cut short or is tampered with is never used, and
 * leaves nothing a later run would take for a complete cache. `OPKIT_RELEASE_MIRROR=<url>` serves
 * all of it from one place (a loopback mirror in the tests, an internal one behind a firewall),
 * laid out as `<url>/{kubernetes,etcd,kwok/download,kwok/api,kwok/raw}`.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as path from 'node:path';
import { KWOK_STAGE_SHA256 } from './kwok-stages';
import { listAt, parseJson, stringAt } from '../constructs/contract/json';

/** Where each project publishes its releases. */
export interface ReleaseSources {
  readonly kubernetes: string;
  readonly etcd: string;
  readonly kwok: string;
  readonly kwokApi: string;
  readonly kwokRaw: string;
}

export const PUBLISHED_SOURCES: ReleaseSources = {
  kubernetes: 'https://dl.k8s.io/release',
  etcd: 'https://github.com/etcd-io/etcd/releases/download',
  kwok: 'https://github.com/kubernetes-sigs/kwok/releases/download',
  kwokApi: 'https://api.github.com/repos/kubernetes-sigs/kwok/releases/tags',
  kwokRaw: 'https://raw.githubusercontent.com/kubernetes-sigs/kwok',
};

/** The same layout under one URL. */
export function mirrorSources(url: string): ReleaseSources {
  const root = url.replace(/\/+$/, '');
  return {
    kubernetes: `${root}/kubernetes`,
    etcd: `${root}/etcd`,
    kwok: `${root}/kwok/download`,
    kwokApi: `${root}/kwok/api`,
    kwokRaw: `${root}/kwok/raw`,
  };
}

const KUBERNETES_COMMANDS = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;

export interface ReleaseVersions {
  readonly kubernetes: string;
  readonly etcd: string;
  /** The etcd release before it, installed as `etcd-<version>`. */
  readonly etcdPrevious: string;
  readonly kwok: string;
}

/** The releases the harness runs; the environment overrides each (as testing/build-control-plane.sh reads it). */
export function releaseVersions(env: NodeJS.ProcessEnv = process.env): ReleaseVersions {
  return {
    kubernetes: env.OPKIT_K8S_VERSION ?? 'v1.36.3',
    etcd: env.OPKIT_ETCD_VERSION ?? 'v3.6.16',
    etcdPrevious: env.OPKIT_ETCD_PREVIOUS_VERSION ?? 'v3.5.21',
    kwok: env.OPKIT_KWOK_VERSION ?? 'v0.8.0',
  };
}

/** The cache directory of a set of releases (the same one the build script fills). */
export function cacheDirectory(versions: ReleaseVersions, env: NodeJS.ProcessEnv = process.env): string {
  const root =
    env.OPKIT_CACHE_DIR ??
    path.join(env.XDG_CACHE_HOME ?? path.join(env.HOME ?? '/tmp', '.cache'), 'cdk8s-operator-kit');
  return path.join(root, `control-plane-k8s-${versions.kubernetes}-etcd-${versions.etcd}`);
}

/** Whether `dir` holds everything the control plane runs (the build script's test, too). */
export function isCompleteCache(dir: string, versions: ReleaseVersions): boolean {
  const files = [...KUBERNETES_COMMANDS, 'etcd', `etcd-${versions.etcdPrevious}`, 'etcdctl', 'kwok'];
  return files.every((f) => fs.existsSync(path.join(dir, f))) && fs.existsSync(path.join(dir, 'kwok-stages'));
}

/** A file that failed its check, or could not be fetched. */
export class ReleaseDownloadError extends Error {}

/** The platform as release file names spell it, or undefined where no release is published. */
export function releasePlatform(): { os: string; arch: string } | undefined {
  const arches: Partial<Record<string, string>> = { x64: 'amd64', arm64: 'arm64' };
  const arch = arches[process.arch];
  // etcd publishes .zip archives for macOS; only the Linux tar.gz layout is handled here.
  return process.platform === 'linux' && arch ? { os: 'linux', arch } : undefined;
}

/** GETs a URL (following redirects) into `file`; resolves with its SHA-256. Never leaves a partial file. */
function download(url: string, file: string, redirects = 5): Promise<string> {
  return new Promise((resolve, reject) => {
    const get = url.startsWith('https:') ? https.get : http.get;
    const req = get(url, { headers: { 'User-Agent': 'cdk8s-operator-kit' }, timeout: 30_000 }, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location && redirects > 0) {
        res.resume();
        download(new URL(res.headers.location, url).toString(), file, redirects - 1).then(resolve, reject);
        return;
      }
      if (status !== 200) {
        res.resume();
        reject(new ReleaseDownloadError(`GET ${url}: HTTP ${String(status)}`));
        return;
      }
      const expected = Number(res.headers['content-length'] ?? NaN);
      const hash = createHash('sha256');
      const out = fs.createWriteStream(file);
      let received = 0;
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        res.unpipe(out);
        out.destroy();
        fs.rmSync(file, { force: true });
        reject(err instanceof ReleaseDownloadError ? err : new ReleaseDownloadError(`GET ${url}: ${err.message}`));
      };
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        hash.update(chunk);
      });
      res.on('error', fail);
      out.on('error', fail);
      res.on('close', () => {
        if (!res.complete)
          fail(new ReleaseDownloadError(`GET ${url}: the connection closed after ${String(received)} bytes`));
      });
      res.pipe(out);
      out.on('finish', () => {
        if (!res.complete || (Number.isFinite(expected) && received !== expected)) {
          fail(new ReleaseDownloadError(`GET ${url}: ${String(received)} of ${String(expected)} bytes`));
          return;
        }
        if (settled) return;
        settled = true;
        resolve(hash.digest('hex'));
      });
    });
    req.on('timeout', () => req.destroy(new Error('no answer in 30 s')));
    req.on('error', (err) => {
      reject(new ReleaseDownloadError(`GET ${url}: ${err.message}`));
    });
  });
}

/** A small text file (a checksum list, release metadata). */
async function fetchText(url: string, dir: string): Promise<string> {
  const file = path.join(dir, `.text-${createHash('sha256').update(url).digest('hex').slice(0, 12)}`);
  await download(url, file);
  const text = fs.readFileSync(file, 'utf8');
  fs.rmSync(file);
  return text;
}

/** Downloads `url` to `file` and refuses it unless its SHA-256 is `sha256`. */
async function downloadVerified(url: string, file: string, sha256: string | undefined): Promise<void> {
  if (!sha256 || !/^[0-9a-f]{64}$/.test(sha256))
    throw new ReleaseDownloadError(`no published SHA-256 for ${url}: not used`);
  const got = await download(url, file);
  if (got !== sha256) {
    fs.rmSync(file, { force: true });
    throw new ReleaseDownloadError(`${url}: SHA-256 ${got}, but ${sha256} was published: refused`);
  }
}

/** `<hash>  <file>` lines (sha256sum's format), by file name. */
function parseSums(text: string): Map<string, string> {
  return new Map(
    text
      .split('\n')
      .map((l) => l.trim().split(/\s+\*?/))
      .filter((p) => p.length === 2)
      .map(([hash = '', name = '']) => [name, hash.toLowerCase()]),
  );
}

async function fetchKubernetes(s: ReleaseSources, v: ReleaseVersions, p: Platform, dir: string): Promise<void> {
  for (const cmd of KUBERNETES_COMMANDS) {
    const url = `${s.kubernetes}/${v.kubernetes}/bin/${p.os}/${p.arch}/${cmd}`;
    const published = (await fetchText(`${url}.sha256`, dir)).trim().split(/\s+/)[0]?.toLowerCase();
    await downloadVerified(url, path.join(dir, cmd), published);
    fs.chmodSync(path.join(dir, cmd), 0o755);
  }
}

/** etcd's archive of one release, unpacked; `names` maps files in it to names in `dir`. */
async function fetchEtcd(
  s: ReleaseSources,
  version: string,
  p: Platform,
  dir: string,
  names: Record<string, string>,
): Promise<void> {
  const archive = `etcd-${version}-${p.os}-${p.arch}.tar.gz`;
  const sums = parseSums(await fetchText(`${s.etcd}/${version}/SHA256SUMS`, dir));
  const file = path.join(dir, archive);
  await downloadVerified(`${s.etcd}/${version}/${archive}`, file, sums.get(archive));
  const unpacked = path.join(dir, `.etcd-${version}`);
  fs.mkdirSync(unpacked);
  execFileSync('tar', ['-xzf', file, '-C', unpacked, '--strip-components=1']);
  for (const [from, to] of Object.entries(names)) fs.renameSync(path.join(unpacked, from), path.join(dir, to));
  fs.rmSync(unpacked, { recursive: true });
  fs.rmSync(file);
}

async function fetchKwok(s: ReleaseSources, v: ReleaseVersions, p: Platform, dir: string): Promise<void> {
  const asset = `kwok-${p.os}-${p.arch}`;
  const release = parseJson(await fetchText(`${s.kwokApi}/${v.kwok}`, dir));
  const digest = stringAt(
    listAt(release, 'assets').find((a) => stringAt(a, 'name') === asset),
    'digest',
  );
  await downloadVerified(`${s.kwok}/${v.kwok}/${asset}`, path.join(dir, 'kwok'), digest?.replace(/^sha256:/, ''));
  fs.chmodSync(path.join(dir, 'kwok'), 0o755);
  const stages = KWOK_STAGE_SHA256[v.kwok];
  if (!stages) throw new ReleaseDownloadError(`no pinned SHA-256 of kwok ${v.kwok}'s stages (kwok-stages.ts)`);
  for (const [stage, sha256] of Object.entries(stages)) {
    const file = path.join(dir, 'kwok-stages', stage);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    await downloadVerified(`${s.kwokRaw}/${v.kwok}/kustomize/stage/${stage}`, file, sha256);
  }
}

type Platform = NonNullable<ReturnType<typeof releasePlatform>>;

/**
 * Downloads and verifies every binary into `out` (which must not exist yet): into a directory of
 * its own beside it first, renamed to `out` only when all is there. Throws ReleaseDownloadError
 * (nothing installed) when any file cannot be fetched or fails its check.
 */
export async function fetchReleaseBinaries(
  out: string,
  versions: ReleaseVersions,
  sources: ReleaseSources,
  platform: Platform,
): Promise<void> {
  // A directory an earlier, failed build left empty is no cache; one with files is the build's to finish.
  if (fs.existsSync(out) && fs.readdirSync(out).length === 0) fs.rmdirSync(out);
  if (fs.existsSync(out)) throw new ReleaseDownloadError(`${out} exists but is incomplete: left to the build`);
  const staging = `${out}.download-${String(process.pid)}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  try {
    await fetchKubernetes(sources, versions, platform, staging);
    await fetchEtcd(sources, versions.etcd, platform, staging, { etcd: 'etcd', etcdctl: 'etcdctl' });
    await fetchEtcd(sources, versions.etcdPrevious, platform, staging, { etcd: `etcd-${versions.etcdPrevious}` });
    await fetchKwok(sources, versions, platform, staging);
    fs.writeFileSync(path.join(staging, 'SOURCE'), 'downloaded\n');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.renameSync(staging, out);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}
