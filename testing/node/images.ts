/**
 * Images for a real node without a registry: archives imported into its containerd, and the
 * images of busybox and etcd (those made from Debian's packages are in debian-images.ts).
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

/** The PATH the official images set (Docker's default), for the images made here. */
export const STANDARD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Debian's busybox-static (`apt-get install busybox-static`), the one file of the busybox image. */
export const BUSYBOX = '/bin/busybox';

/**
 * `busybox` (Docker Hub's `library/busybox:latest`), laid out as the official image: every applet in
 * /bin as a link to /bin/busybox, no entrypoint and `sh` as its command, run as root, from Debian's
 * busybox-static. The seed's CronTab runs it; the node's volume helper pods too.
 */
export const BUSYBOX_IMAGE = { name: 'busybox:latest' } as const;

/**
 * The busybox image's archive, written to `out`; returns `out`. `alsoNamed`: tags it answers to
 * besides `latest`, such as one a kind pins.
 */
export function busyboxImageArchive(out: string, alsoNamed: readonly string[] = []): string {
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
        alsoNamed,
        root,
        entrypoint: [],
        cmd: ['sh'],
        env: [`PATH=${STANDARD_PATH}`],
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
 * release, etcdctl and etcdutl), laid out as the official image: in /usr/local/bin, on PATH, no
 * entrypoint, no shell.
 */
export function etcdImageArchive(
  binaries: { etcd: string; etcdctl: string; etcdutl?: string },
  version: string,
  out: string,
): string {
  return writeOciArchive(
    {
      name: `quay.io/coreos/etcd:v${version}`,
      files: {
        '/usr/local/bin/etcd': binaries.etcd,
        '/usr/local/bin/etcdctl': binaries.etcdctl,
        ...(binaries.etcdutl ? { '/usr/local/bin/etcdutl': binaries.etcdutl } : {}),
      },
      entrypoint: [],
      cmd: ['/usr/local/bin/etcd'],
      env: [`PATH=${STANDARD_PATH}`],
      user: '0',
    },
    out,
  );
}
