/**
 * The control plane's binaries from published releases, offline: a loopback HTTP server serves the
 * releases' layout (made from the binaries the harness built), and the download path fetches,
 * verifies and installs them — or refuses a tampered file and never uses a partial download.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { downloadBinaries, startControlPlane } from '../../testing/control-plane';
import { KWOK_STAGE_SHA256 } from '../../testing/kwok-stages';
import {
  fetchReleaseBinaries,
  isCompleteCache,
  mirrorSources,
  releasePlatform,
  releaseVersions,
} from '../../testing/release-binaries';
import { testIf } from '../support/kube';

jest.setTimeout(300_000);

const binDir = process.env.OPKIT_TEST_BIN_DIR ?? '';
const platform = releasePlatform();
const versions = releaseVersions();
const test = testIf(
  binDir !== '' && platform !== undefined && !!KWOK_STAGE_SHA256[versions.kwok],
  'needs the binaries the harness built (not a cluster from OPKIT_KUBECONFIG) on linux, and pinned stage hashes',
);

const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** The releases' layout under `root`, from the harness's binaries. */
function makeMirror(root: string): void {
  const { os: osName, arch } = platform ?? { os: 'linux', arch: 'amd64' };
  const k8s = path.join(root, 'kubernetes', versions.kubernetes, 'bin', osName, arch);
  fs.mkdirSync(k8s, { recursive: true });
  for (const cmd of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler']) {
    fs.symlinkSync(path.join(binDir, cmd), path.join(k8s, cmd));
    fs.writeFileSync(path.join(k8s, `${cmd}.sha256`), sha256(path.join(binDir, cmd)));
  }
  const etcdRelease = (version: string, files: Record<string, string>) => {
    const name = `etcd-${version}-${osName}-${arch}`;
    const dir = path.join(root, 'etcd', version);
    const staging = path.join(root, '.staging', name);
    fs.mkdirSync(staging, { recursive: true });
    fs.mkdirSync(dir, { recursive: true });
    for (const [from, to] of Object.entries(files)) fs.copyFileSync(path.join(binDir, from), path.join(staging, to));
    execFileSync('tar', ['-czf', path.join(dir, `${name}.tar.gz`), '-C', path.dirname(staging), name]);
    fs.writeFileSync(path.join(dir, 'SHA256SUMS'), `${sha256(path.join(dir, `${name}.tar.gz`))}  ${name}.tar.gz\n`);
  };
  etcdRelease(versions.etcd, { etcd: 'etcd', etcdctl: 'etcdctl' });
  etcdRelease(versions.etcdPrevious, { [`etcd-${versions.etcdPrevious}`]: 'etcd' });
  const kwok = path.join(root, 'kwok', 'download', versions.kwok);
  fs.mkdirSync(kwok, { recursive: true });
  fs.symlinkSync(path.join(binDir, 'kwok'), path.join(kwok, `kwok-${osName}-${arch}`));
  fs.mkdirSync(path.join(root, 'kwok', 'api'), { recursive: true });
  fs.writeFileSync(
    path.join(root, 'kwok', 'api', versions.kwok),
    JSON.stringify({
      tag_name: versions.kwok,
      assets: [{ name: `kwok-${osName}-${arch}`, digest: `sha256:${sha256(path.join(binDir, 'kwok'))}` }],
    }),
  );
  for (const stage of Object.keys(KWOK_STAGE_SHA256[versions.kwok] ?? {})) {
    const to = path.join(root, 'kwok', 'raw', versions.kwok, 'kustomize', 'stage', stage);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(path.join(binDir, 'kwok-stages', stage), to);
  }
}

interface Faults {
  /** Files (by URL path suffix) served with one byte changed. */
  readonly tamper?: string;
  /** A file whose connection is cut after 1 MiB. */
  readonly cut?: string;
}

/** A static server of `root` on loopback; its URL. */
async function serveMirror(root: string, faults: Faults = {}): Promise<{ url: string; close(): void }> {
  const server = http.createServer((req, res) => {
    const file = path.join(root, decodeURIComponent((req.url ?? '/').split('?')[0] ?? '/'));
    if (!file.startsWith(root) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404);
      res.end();
      return;
    }
    const size = fs.statSync(file).size;
    res.writeHead(200, { 'Content-Length': size, 'Content-Type': 'application/octet-stream' });
    if (faults.tamper && file.endsWith(faults.tamper)) {
      const bytes = fs.readFileSync(file);
      const middle = bytes.length >> 1;
      bytes.writeUInt8(bytes.readUInt8(middle) ^ 0xff, middle);
      res.end(bytes);
      return;
    }
    if (faults.cut && file.endsWith(faults.cut)) {
      const head = Buffer.alloc(1024 * 1024);
      const fd = fs.openSync(file, 'r');
      fs.readSync(fd, head, 0, head.length, 0);
      fs.closeSync(fd);
      res.write(head, () => res.socket?.destroy());
      return;
    }
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

let work = '';
let mirrorRoot = '';
beforeAll(() => {
  if (!binDir || !platform) return;
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-release-'));
  mirrorRoot = path.join(work, 'mirror');
  makeMirror(mirrorRoot);
});
afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** What is left in a cache root besides `keep`: never a staging directory of a failed download. */
function leftovers(cacheRoot: string): string[] {
  return fs.existsSync(cacheRoot) ? fs.readdirSync(cacheRoot) : [];
}

test('a tampered file is refused, and nothing is installed', async () => {
  const mirror = await serveMirror(mirrorRoot, { tamper: 'kube-scheduler' });
  const cacheRoot = path.join(work, 'tampered');
  try {
    await expect(
      fetchReleaseBinaries(path.join(cacheRoot, 'cp'), versions, mirrorSources(mirror.url), platform!),
    ).rejects.toThrow(/kube-scheduler: SHA-256 [0-9a-f]{64}, but [0-9a-f]{64} was published: refused/);
    expect(leftovers(cacheRoot)).toEqual([]);
  } finally {
    mirror.close();
  }
});

test('a download cut short is never used; the next one completes', async () => {
  const cut = await serveMirror(mirrorRoot, { cut: `kube-apiserver` });
  const cacheRoot = path.join(work, 'cut');
  const out = path.join(cacheRoot, 'cp');
  try {
    await expect(fetchReleaseBinaries(out, versions, mirrorSources(cut.url), platform!)).rejects.toThrow(
      /kube-apiserver/,
    );
    expect(leftovers(cacheRoot)).toEqual([]);
  } finally {
    cut.close();
  }
  const whole = await serveMirror(mirrorRoot);
  try {
    await fetchReleaseBinaries(out, versions, mirrorSources(whole.url), platform!);
    expect(isCompleteCache(out, versions)).toBe(true);
    expect(leftovers(cacheRoot)).toEqual(['cp']);
    for (const cmd of ['kube-apiserver', 'etcd', `etcd-${versions.etcdPrevious}`, 'etcdctl', 'kwok'])
      expect({ cmd, same: sha256(path.join(out, cmd)) === sha256(path.join(binDir, cmd)) }).toEqual({
        cmd,
        same: true,
      });
  } finally {
    whole.close();
  }
});

test("a fresh machine's first startControlPlane() with a mirror: downloaded, verified, and running", async () => {
  const mirror = await serveMirror(mirrorRoot);
  const saved = { ...process.env };
  process.env.OPKIT_CACHE_DIR = path.join(work, 'fresh');
  process.env.OPKIT_RELEASE_MIRROR = mirror.url;
  delete process.env.KUBEBUILDER_ASSETS;
  delete process.env.OPKIT_RELEASE_DOWNLOAD;
  const started = Date.now();
  try {
    const cp = await startControlPlane({ verbose: false });
    try {
      process.stderr.write(
        `[release-download] first start from a loopback mirror: ${((Date.now() - started) / 1000).toFixed(1)}s\n`,
      );
      expect(cp.version).toBe(versions.kubernetes);
      expect(cp.binDir).toBe(
        path.join(work, 'fresh', `control-plane-k8s-${versions.kubernetes}-etcd-${versions.etcd}`),
      );
      expect(cp.nodes).toBe(true);
      // The second start finds the cache complete and downloads nothing.
      expect(await downloadBinaries(false)).toBe(false);
    } finally {
      await cp.stop();
    }
  } finally {
    process.env = saved;
    mirror.close();
  }
});
