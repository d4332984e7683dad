/** The programs an image build runs, with errors that say what to install instead of a stack trace. */
import { spawnSync } from 'node:child_process';

/** Thrown when a build cannot go on; its message is meant for the user as it is. */
export class ImageBuildError extends Error {
  override readonly name = 'ImageBuildError';
}

/** The distribution package each program comes from (Debian's names). */
const PACKAGE_OF: Record<string, string> = {
  mmdebstrap: 'mmdebstrap',
  buildah: 'buildah',
  podman: 'podman',
  'dpkg-deb': 'dpkg',
  tar: 'tar',
  npm: 'npm',
};

/** Whether `program` is on the PATH. */
export function have(program: string): boolean {
  return spawnSync(program, ['--version'], { stdio: 'ignore' }).error === undefined;
}

/** Runs a program to completion and returns its standard output; throws with its error output. */
export function run(
  program: string,
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): string {
  const r = spawnSync(program, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) {
    const pkg = PACKAGE_OF[program];
    throw new ImageBuildError(
      `${program} is needed to build the image but could not be run (${r.error.message})` +
        (pkg ? `; install the "${pkg}" package (apt-get install ${pkg})` : ''),
    );
  }
  if (r.status !== 0) {
    throw new ImageBuildError(`${program} ${args.join(' ')} failed (exit ${String(r.status)}):\n${r.stderr.trim()}`);
  }
  return r.stdout;
}
