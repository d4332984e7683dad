/**
 * The images the kit's samples run, loaded onto a real node: memcached, nginx:alpine and postgres
 * from Debian's packages (cached), busybox under the tag the etcd backup pins, and
 * quay.io/coreos/etcd at every release the control plane's build made. `cluster --real-node
 * --sample-images` and the e2e tier load the same set.
 */
import * as path from 'node:path';
import { BACKUP_TOOLS_IMAGE } from '../../constructs';
import { etcdTools } from '../etcd-tools';
import { cacheDirectory, releaseVersions } from '../release-binaries';
import { debianImageArchive, SAMPLE_IMAGES } from './debian-images';
import { busyboxImageArchive, etcdImageArchive } from './images';

export interface SampleImagesLoaded {
  /** The image names now on the node. */
  readonly names: readonly string[];
  /** etcd release → its binary on this machine, as etcd images were made of them. */
  readonly etcdReleases: Readonly<Record<string, string>>;
}

/**
 * Loads the sample images onto `node`. `binDir`: the control plane's binaries (for etcd);
 * `workDir`: where archives made per run are written.
 */
export function loadSampleImages(
  node: { loadImage(archive: string): void },
  plane: { readonly binDir?: string; readonly workDir: string },
): SampleImagesLoaded {
  const names: string[] = [];
  const load = (archive: string, ...named: string[]) => {
    node.loadImage(archive);
    names.push(...named);
  };
  const cache = path.join(cacheDirectory(releaseVersions()), '..', 'images');
  for (const image of SAMPLE_IMAGES) load(debianImageArchive(image, cache), image.name);
  // The node has busybox as `latest` already (its volume helper); the etcd backup pins a tag.
  load(
    busyboxImageArchive(path.join(plane.workDir, 'busybox-pinned.oci.tar'), [BACKUP_TOOLS_IMAGE]),
    BACKUP_TOOLS_IMAGE,
  );
  const etcd = etcdTools(plane.binDir);
  if (etcd.etcdctl) {
    for (const [version, etcdBinary] of Object.entries(etcd.releases)) {
      const archive = path.join(plane.workDir, `etcd-${version}.oci.tar`);
      const binaries = { etcd: etcdBinary, etcdctl: etcd.etcdctl, etcdutl: etcd.etcdutl };
      load(etcdImageArchive(binaries, version, archive), `quay.io/coreos/etcd:v${version}`);
    }
  }
  return { names, etcdReleases: etcd.releases };
}
