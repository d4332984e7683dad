/**
 * Images for a real node without a registry: archives imported into its containerd, and the
 * images of real programs the kit's kinds run, made from the distribution's packages.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeOciArchive } from './oci-archive';
import { listAt, parseJson, stringAt } from '../../constructs/contract/json';

/**
 * The names the kubelet asks containerd for: a short name (`memcached:1.6`,
 * `cdk8s-operator-kit/reconciler:0.1.0`) is normalised as a registry client does, to Docker Hub's
 * (`docker.io/library/memcached:1.6`), so the image is found under both.
 */
export function normalisedImageName(name: string): string {
  const first = name.split('/')[0] ?? '';
  const hasRegistry = name.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (hasRegistry) return name;
  return name.includes('/') ? `docker.io/${name}` : `docker.io/library/${name}`;
}

/** The image names an OCI archive's index carries. */
export function archiveImageNames(archive: string): string[] {
  // Archives list it as `index.json` or `./index.json`, by how they were made.
  const listed = execFileSync('tar', ['-tf', archive], { encoding: 'utf8' }).split('\n');
  const entry = listed.find((f) => f === 'index.json' || f === './index.json') ?? 'index.json';
  const index = parseJson(execFileSync('tar', ['-xOf', archive, entry], { encoding: 'utf8' }));
  return listAt(index, 'manifests').flatMap((m) => {
    const name =
      stringAt(m, 'annotations', 'io.containerd.image.name') ??
      stringAt(m, 'annotations', 'org.opencontainers.image.ref.name');
    return name?.includes(':') ? [name] : [];
  });
}

/** Debian's memcached, as the official image runs it (`memcached` as entrypoint, user memcache). */
export const MEMCACHED_IMAGE = { name: 'memcached:1.6', debianPackage: 'memcached', user: '11211' } as const;

/**
 * The memcached image's archive, from Debian bookworm's package (mmdebstrap, no registry), cached in
 * `cacheDir` (a new Debian package version means a new image).
 */
export function memcachedImageArchive(cacheDir: string): string {
  const archive = path.join(cacheDir, 'memcached-bookworm.oci.tar');
  if (fs.existsSync(archive)) return archive;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-memcached-root-'));
  try {
    const sources = ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list'].find(
      (f) => fs.existsSync(f) && fs.readFileSync(f, 'utf8').trim() !== '',
    );
    execFileSync(
      'mmdebstrap',
      [
        '--quiet',
        '--variant=extract',
        `--include=${MEMCACHED_IMAGE.debianPackage}`,
        'bookworm',
        root,
        ...(sources ? [sources] : []),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SOURCE_DATE_EPOCH: '0' } },
    );
    for (const unused of ['dev', 'usr/share/doc', 'usr/share/man', 'var/cache/apt', 'var/lib/apt'])
      fs.rmSync(path.join(root, unused), { recursive: true, force: true });
    fs.mkdirSync(cacheDir, { recursive: true });
    writeOciArchive(
      { name: MEMCACHED_IMAGE.name, root, entrypoint: ['/usr/bin/memcached'], user: MEMCACHED_IMAGE.user },
      `${archive}.tmp`,
    );
    fs.renameSync(`${archive}.tmp`, archive);
    return archive;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** Debian's busybox-static (`apt-get install busybox-static`), the one file of the busybox image. */
export const BUSYBOX = '/bin/busybox';

/**
 * `busybox` (Docker Hub's `library/busybox:latest`), laid out as the official image: every applet in
 * /bin as a link to /bin/busybox, no entrypoint and `sh` as its command, run as root, from Debian's
 * busybox-static. The seed's CronTab runs it; the node's volume helper pods too.
 */
export const BUSYBOX_IMAGE = { name: 'busybox:latest' } as const;

/** The busybox image's archive, written to `out`; returns `out`. */
export function busyboxImageArchive(out: string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-busybox-root-'));
  try {
    const bin = path.join(root, 'bin');
    fs.mkdirSync(bin);
    fs.copyFileSync(BUSYBOX, path.join(bin, 'busybox'));
    fs.chmodSync(path.join(bin, 'busybox'), 0o755);
    const applets = execFileSync(BUSYBOX, ['--list'], { encoding: 'utf8' }).split('\n').filter(Boolean);
    for (const applet of applets) if (applet !== 'busybox') fs.symlinkSync('busybox', path.join(bin, applet));
    return writeOciArchive(
      {
        name: BUSYBOX_IMAGE.name,
        root,
        entrypoint: [],
        cmd: ['sh'],
        env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
        user: '0',
      },
      out,
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/**
 * `quay.io/coreos/etcd:v<version>` from the etcd binaries the control plane's build made (etcd at the
 * release, etcdctl), laid out as the official image: both in /usr/local/bin, on PATH, no entrypoint.
 */
export function etcdImageArchive(binaries: { etcd: string; etcdctl: string }, version: string, out: string): string {
  return writeOciArchive(
    {
      name: `quay.io/coreos/etcd:v${version}`,
      files: { '/usr/local/bin/etcd': binaries.etcd, '/usr/local/bin/etcdctl': binaries.etcdctl },
      entrypoint: [],
      cmd: ['/usr/local/bin/etcd'],
      env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
      user: '0',
    },
    out,
  );
}
