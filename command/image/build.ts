/**
 * Builds a reconciler image without a container daemon or registry: the base root file system
 * from the distribution's packages, Node from the npm registry, the bundle from the project, put
 * together by buildah in storage of its own, and written as an OCI archive. Two layers: the base
 * with Node (the same for every image of this kit version) and the bundle. Every file and the
 * image's creation time carry `sourceDateEpoch`, so the same inputs give the same digest.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundleReconciler } from './bundle';
import {
  APP_DIR,
  BASE_SYSTEM,
  ENTRYPOINT,
  EXPOSED_PORTS,
  IMAGE_USER,
  type ImageDescription,
  imageLabels,
  NODE_RUNTIME,
} from './definition';
import { extractNodeRuntime } from './node-runtime';
import { buildRootfs } from './rootfs';
import { have, run } from './tools';
import { listAt, numberAt, parseJson, stringAt } from '../../constructs/contract/json';

export interface BuildImageOptions {
  /** The reconciler's entry point (calls `runOperator`), relative to `cwd`. */
  readonly entry: string;
  /** The image reference, e.g. `registry.example.com/my-operator:1.0.0`. */
  readonly reference: string;
  /** What the labels say (title, version, source, licenses, revision, creation time). */
  readonly description: ImageDescription;
  /** The folder the archive and the build's scratch space go in. */
  readonly outDir: string;
  /** The project whose esbuild and sources are used. @default process.cwd() */
  readonly cwd?: string;
  /** Also load the image into podman's local storage when podman is there. @default true */
  readonly load?: boolean;
  /** Told of each step. @default none */
  readonly log?: (line: string) => void;
}

/** One layer of the built image. */
export interface BuiltLayer {
  readonly digest: string;
  /** Compressed size in bytes. */
  readonly size: number;
  readonly holds: string;
}

export interface BuiltImage {
  readonly reference: string;
  /** The OCI archive (`oci-archive:` transport). */
  readonly archive: string;
  /** The manifest's digest: the image's identity, the same for the same inputs. */
  readonly digest: string;
  readonly layers: readonly BuiltLayer[];
  /** Uncompressed sizes in bytes of what the image holds. */
  readonly contents: { readonly baseSystem: number; readonly node: number; readonly bundle: number };
  /** Whether it was also loaded into podman's local storage. */
  readonly loaded: boolean;
}

/** Builds the image; see the module's comment. */
export async function buildImage(options: BuildImageOptions): Promise<BuiltImage> {
  const log = options.log ?? (() => undefined);
  const cwd = options.cwd ?? process.cwd();
  const outDir = path.resolve(cwd, options.outDir);
  const work = path.join(outDir, '.work');
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(work, { recursive: true });
  try {
    log(`bundling ${options.entry}`);
    const appDir = path.join(work, 'app');
    await bundleReconciler({ entry: options.entry, outfile: path.join(appDir, 'main.js'), cwd });
    fs.rmSync(path.join(appDir, 'main.js.map')); // Node would not use it without --enable-source-maps.
    log('unpacking the distribution packages into the base root file system');
    const rootfs = path.join(work, 'rootfs');
    buildRootfs(rootfs);
    log(`adding node ${NODE_RUNTIME.version}`);
    const nodeFiles = extractNodeRuntime(path.join(work, 'node'));
    const archive = path.join(outDir, `${archiveName(options.reference)}.oci.tar`);
    assemble({ work, rootfs, nodeFiles, appDir, archive, options, log });
    const manifest = readManifest(archive);
    const loaded = (options.load ?? true) && loadIntoPodman(archive, options.reference, log);
    return {
      reference: options.reference,
      archive,
      digest: manifest.digest,
      layers: manifest.layers.map((l, i) => ({ ...l, holds: i === 0 ? 'base system and node' : 'the bundle' })),
      contents: {
        baseSystem: treeSize(rootfs),
        node: fs.statSync(nodeFiles.node).size,
        bundle: treeSize(appDir),
      },
      loaded,
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

type Buildah = (...args: string[]) => string;

/** buildah on storage of the build's own, thrown away afterwards: nothing of an earlier build leaks in. */
function buildahIn(work: string): Buildah {
  const storage = [
    '--root',
    path.join(work, 'storage'),
    '--runroot',
    path.join(work, 'run'),
    '--storage-driver',
    'vfs',
  ];
  return (...args) => run('buildah', [...storage, ...args]).trim();
}

/**
 * One time on every file of the layer and in its history; no builder label, so that the digest
 * depends on the content alone, not on when or with which buildah it was assembled.
 */
function commitFlags(epoch: number): string[] {
  return ['--quiet', '--timestamp', String(epoch), '--identity-label=false', '--rm'];
}

function assemble(a: {
  work: string;
  rootfs: string;
  nodeFiles: { node: string; license: string };
  appDir: string;
  archive: string;
  options: BuildImageOptions;
  log: (line: string) => void;
}): void {
  const buildah = buildahIn(a.work);
  a.log('layer 1: the base system and node');
  commitBaseLayer(buildah, a.rootfs, a.nodeFiles);
  a.log('layer 2: the bundle');
  commitAppLayer(buildah, a.appDir, a.options);
  fs.rmSync(a.archive, { force: true });
  buildah('push', '--quiet', 'localhost/image', `oci-archive:${a.archive}:${a.options.reference}`);
  a.log(`wrote ${a.archive}`);
}

/** The base system and Node, committed as `localhost/base`. */
function commitBaseLayer(buildah: Buildah, rootfs: string, nodeFiles: { node: string; license: string }): void {
  const { uid, name } = IMAGE_USER;
  const base = buildah('from', '--isolation', 'chroot', 'scratch');
  buildah('add', base, `${rootfs}/`, '/');
  buildah('add', '--chmod', '0755', base, nodeFiles.node, NODE_RUNTIME.path);
  buildah('add', base, nodeFiles.license, '/usr/share/doc/nodejs/LICENSE');
  buildah('add', '--chown', `${uid}:${uid}`, base, path.join(rootfs, 'home', name), `/home/${name}`);
  const packages = BASE_SYSTEM.packages.join(' ');
  buildah('config', '--created-by', `debian ${BASE_SYSTEM.release} (${packages}), node ${NODE_RUNTIME.version}`, base);
  // The epoch itself, not the project's time: one base layer for every image of this definition.
  buildah('commit', ...commitFlags(0), base, 'localhost/base');
}

/** The bundle on top of the base, with the image's config, committed as `localhost/image`. */
function commitAppLayer(buildah: Buildah, appDir: string, options: BuildImageOptions): void {
  const { uid } = IMAGE_USER;
  const app = buildah('from', '--isolation', 'chroot', 'localhost/base');
  buildah('add', app, `${appDir}/`, `${APP_DIR}/`);
  const config = [
    ['--user', `${uid}:${uid}`],
    ['--workingdir', APP_DIR],
    ['--entrypoint', JSON.stringify(ENTRYPOINT)],
    ['--cmd', ''],
    ...EXPOSED_PORTS.map((p) => ['--port', `${p}/tcp`]),
    ['--env', 'NODE_ENV=production'],
    ['--created-by', `cdk8s-operator-kit image --entry ${options.entry}`],
    ...Object.entries(imageLabels(options.description)).map(([k, v]) => ['--label', `${k}=${v}`]),
  ];
  buildah('config', ...config.flat(), app);
  buildah('commit', ...commitFlags(options.description.created), app, 'localhost/image');
}

/** A file name from an image reference: `registry/a/b:1.0` becomes `b-1.0`. */
function archiveName(reference: string): string {
  const last = reference.split('/').pop() ?? reference;
  return last.replace(/[:@]/g, '-');
}

/** The manifest's digest and its layers, read from the OCI archive. */
function readManifest(archive: string): { digest: string; layers: { digest: string; size: number }[] } {
  const digest = stringAt(parseJson(run('tar', ['-xOf', archive, 'index.json'])), 'manifests', 0, 'digest') ?? '';
  const manifest = parseJson(run('tar', ['-xOf', archive, `blobs/${digest.replace(':', '/')}`]));
  return {
    digest,
    layers: listAt(manifest, 'layers').map((l) => ({
      digest: stringAt(l, 'digest') ?? '',
      size: numberAt(l, 'size') ?? 0,
    })),
  };
}

function loadIntoPodman(archive: string, reference: string, log: (line: string) => void): boolean {
  if (!have('podman')) return false;
  run('podman', ['load', '--quiet', '--input', archive]);
  log(`loaded into podman's storage as ${reference}`);
  return true;
}

function treeSize(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return total;
}
