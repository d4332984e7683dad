import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * Node's arguments that start the package's command (`command/cli.ts`): the run's bundle of it
 * when the tier's set-up made one (OPKIT_TEST_COMMAND, see test/harness/command-bundle.ts), else
 * the sources through tsx.
 */
export function commandArgs(): string[] {
  const bundle = process.env.OPKIT_TEST_COMMAND;
  return bundle ? [bundle] : ['--import', 'tsx', path.join(ROOT, 'command', 'cli.ts')];
}
