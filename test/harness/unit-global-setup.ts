import { bundledSource } from '../support/bundle-sources';
import { COMMAND_SOURCE } from '../support/command';
import { provisionHelm } from '../support/helm';
import { provisionKstatus } from '../support/kstatus';
import { enterRunTempDir } from './run-temp-dir';
import { startTypeCheck } from './type-check';

/** The unit tier's tools, before any test file runs: helm for the chart tests, kstatus for the readiness tests, the command. */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  enterRunTempDir();
  // npm test's type-check, beside the set-up (test/harness/type-check.ts).
  startTypeCheck();
  provisionHelm();
  // kstatus (the readiness rules Helm 4, Flux and kpt wait with), built from the Go module proxy too.
  provisionKstatus();
  // The package's command bundled once for the run (the render and image tests start it).
  process.env.OPKIT_TEST_COMMAND ??= await bundledSource(COMMAND_SOURCE);
  process.stderr.write(
    `\n[unit set-up] helm, kstatus and the command ready after ${((Date.now() - started) / 1000).toFixed(1)}s\n`,
  );
}
