import * as path from 'node:path';

/** The package's command, as the sources hold it. */
export const COMMAND_SOURCE = path.resolve(__dirname, '..', '..', 'command', 'cli.ts');

/**
 * Node's arguments that start the package's command (`command/cli.ts`): the run's bundle of it
 * when the tier's set-up made one (OPKIT_TEST_COMMAND, by bundle-sources.ts), else the sources
 * through tsx.
 */
export function commandArgs(): string[] {
  const bundle = process.env.OPKIT_TEST_COMMAND;
  return bundle ? [bundle] : ['--import', 'tsx', COMMAND_SOURCE];
}
