import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundleSources } from '../support/bundle-sources';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * The package's command (`command/cli.ts`) bundled once for the run, for the tests that start it
 * again and again (see bundle-sources.ts for what that saves). Returns the bundle's path; the
 * run's temporary directory holds it.
 */
export async function bundleTestCommand(): Promise<string> {
  const outfile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-command-')), 'cli.js');
  await bundleSources(path.join(ROOT, 'command', 'cli.ts'), outfile);
  return outfile;
}
