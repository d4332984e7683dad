/** `cdk8s-operator-kit image`: the reconciler image (an OCI archive), without a daemon. */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { buildImage, type BuiltImage } from '../image/build';
import { NODE_RUNTIME } from '../image/definition';
import { describeProject } from '../image/project';
import { type Verb, UsageError } from './verb';

export const imageVerb: Verb = {
  help: `  image --entry <file> [--tag <image>] [--output <dir>] [--no-load] [--json]
      Build the reconciler image of an entry point that calls runOperator, as an OCI archive in
      <dir> (default build/image), without a container daemon or registry (needs mmdebstrap and
      buildah). The tag defaults to <package name>/reconciler:<package version>. The image is
      also loaded into podman's storage when podman is installed, unless --no-load.
`,
  run: imageCommand,
};

const MiB = 1024 * 1024;

function report(image: BuiltImage): string {
  const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
  return [
    `${image.reference}  ${image.digest}`,
    `  archive: ${image.archive}`,
    ...image.layers.map((l) => `  layer ${l.digest.slice(7, 19)}: ${mib(l.size)} compressed, ${l.holds}`),
    `  holds: base system ${mib(image.contents.baseSystem)}, node ${NODE_RUNTIME.version} ${mib(image.contents.node)}, bundle ${mib(image.contents.bundle)}`,
    image.loaded ? `  loaded into podman's storage: podman run ${image.reference}` : '  not loaded (no podman)',
    '',
  ].join('\n');
}

async function imageCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      entry: { type: 'string' },
      tag: { type: 'string' },
      output: { type: 'string', default: path.join('build', 'image') },
      'no-load': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  if (!values.entry) throw new UsageError('image: --entry <file> is required');
  const cwd = process.cwd();
  const project = describeProject(cwd);
  const image = await buildImage({
    entry: values.entry,
    reference: values.tag ?? project.reference,
    description: project.description,
    outDir: values.output,
    cwd,
    load: !values['no-load'],
    log: values.json ? undefined : (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(values.json ? `${JSON.stringify(image, null, 2)}\n` : report(image));
  return 0;
}
