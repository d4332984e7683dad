/** `cdk8s-operator-kit bundle`: an entry point bundled into one file, as the image holds it. */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { bundleReconciler } from '../image/bundle';
import { type Verb, UsageError } from './verb';

export const bundleVerb: Verb = {
  help: `  bundle --entry <file> [--output <file>] [--no-minify]
      Bundle the entry point into one file (default build/reconciler/main.js) with esbuild.
`,
  run: bundleCommand,
};

const MiB = 1024 * 1024;

async function bundleCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      entry: { type: 'string' },
      output: { type: 'string', default: path.join('build', 'reconciler', 'main.js') },
      'no-minify': { type: 'boolean', default: false },
    },
  });
  if (!values.entry) throw new UsageError('bundle: --entry <file> is required');
  const bytes = await bundleReconciler({ entry: values.entry, outfile: values.output, minify: !values['no-minify'] });
  process.stdout.write(`${values.output}: ${(bytes / MiB).toFixed(1)} MiB\n`);
  return 0;
}
