/**
 * A one-layer OCI image archive from files on this machine, without a registry, a daemon or
 * buildah: the layer is a tar of a root file system, and the archive (an OCI image layout in a
 * tar) is what `ctr images import` and `podman load` read. For the node's own small images (the
 * pod sandbox's pause program) and the tests' static programs.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface ImageFiles {
  /** e.g. `opkit.local/pause:1` */
  readonly name: string;
  /** More names of the same image, e.g. a pinned tag beside `latest`. */
  readonly alsoNamed?: readonly string[];
  /** A root file system to start from (copied as it is). */
  readonly root?: string;
  /** Path in the image → file on this machine (made executable; copied into `root` when given). */
  readonly files?: Readonly<Record<string, string>>;
  readonly entrypoint: readonly string[];
  /** The default arguments (the image's CMD), e.g. `['sh']` with no entrypoint. */
  readonly cmd?: readonly string[];
  /** `NAME=value` lines of the image's environment. */
  readonly env?: readonly string[];
  /** @default 65532 (non-root) */
  readonly user?: string;
  /** Path in the image → uid (and gid) that owns it, as a package's users own their directories. @default all root's */
  readonly owners?: Readonly<Record<string, number>>;
  /** The signal that stops the container, e.g. nginx's SIGQUIT. @default SIGTERM */
  readonly stopSignal?: string;
}

function sha256(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** Puts files into a root file system, executable. */
function copyFiles(root: string, files: Readonly<Record<string, string>>): void {
  for (const [inImage, source] of Object.entries(files)) {
    const target = path.join(root, inImage);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(source, target);
    fs.chmodSync(target, 0o755);
  }
}

/**
 * The root file system as a tar with fixed times, owned by root but for the paths `owners` names:
 * the same files give the same digest.
 */
function writeLayer(root: string, layer: string, owners: Readonly<Record<string, number>> = {}): string {
  const owned = Object.entries(owners);
  if (owned.length === 0) {
    execFileSync('tar', ['--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-C', root, '-cf', layer, '.']);
    return layer;
  }
  // Owners as on disk: everything root's first, then the named paths theirs.
  execFileSync('chown', ['-R', '--no-dereference', '0:0', root]);
  for (const [inImage, id] of owned) fs.chownSync(path.join(root, inImage), id, id);
  execFileSync('tar', ['--numeric-owner', '--mtime=@0', '-C', root, '-cf', layer, '.']);
  return layer;
}

/** How the image runs: the `config` of its OCI configuration. */
function runConfig(image: ImageFiles): object {
  return {
    Entrypoint: image.entrypoint,
    ...(image.cmd ? { Cmd: image.cmd } : {}),
    ...(image.env ? { Env: image.env } : {}),
    User: image.user ?? '65532',
    ...(image.stopSignal ? { StopSignal: image.stopSignal } : {}),
  };
}

/** Writes the archive to `out`; returns `out`. */
export function writeOciArchive(image: ImageFiles, out: string): string {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-oci-'));
  try {
    const root = image.root ?? path.join(work, 'rootfs');
    copyFiles(root, image.files ?? {});
    const layout = path.join(work, 'layout');
    const blobs = path.join(layout, 'blobs', 'sha256');
    fs.mkdirSync(blobs, { recursive: true });
    const layer = writeLayer(root, path.join(work, 'layer.tar'), image.owners);
    const layerDigest = sha256(layer);
    fs.copyFileSync(layer, path.join(blobs, layerDigest));
    const blob = (value: object): { digest: string; size: number } => {
      const text = JSON.stringify(value);
      const digest = createHash('sha256').update(text).digest('hex');
      fs.writeFileSync(path.join(blobs, digest), text);
      return { digest: `sha256:${digest}`, size: Buffer.byteLength(text) };
    };
    const config = blob({
      architecture: 'amd64',
      os: 'linux',
      config: runConfig(image),
      rootfs: { type: 'layers', diff_ids: [`sha256:${layerDigest}`] },
    });
    const manifest = blob({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
      layers: [
        {
          mediaType: 'application/vnd.oci.image.layer.v1.tar',
          digest: `sha256:${layerDigest}`,
          size: fs.statSync(layer).size,
        },
      ],
    });
    fs.writeFileSync(path.join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    fs.writeFileSync(
      path.join(layout, 'index.json'),
      JSON.stringify({
        schemaVersion: 2,
        manifests: [image.name, ...(image.alsoNamed ?? [])].map((name) => ({
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          ...manifest,
          annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': name },
        })),
      }),
    );
    fs.mkdirSync(path.dirname(out), { recursive: true });
    execFileSync('tar', ['-C', layout, '-cf', out, 'oci-layout', 'index.json', 'blobs']);
    return out;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
