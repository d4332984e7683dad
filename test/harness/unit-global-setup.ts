import { provisionHelm } from '../support/helm';
import { provisionKstatus } from '../support/kstatus';
import { enterRunTempDir } from './run-temp-dir';

/** The unit tier's tools, before any test file runs: helm for the chart tests, kstatus for the readiness tests. */
export default function globalSetup(): void {
  const started = Date.now();
  enterRunTempDir();
  provisionHelm();
  // kstatus (the readiness rules Helm 4, Flux and kpt wait with), built from the Go module proxy too.
  provisionKstatus();
  process.stderr.write(`\n[unit set-up] helm and kstatus ready after ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
}
