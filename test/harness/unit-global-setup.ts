import { provisionHelm } from '../support/helm';

/** The unit tier's tools, before any test file runs: helm for the chart tests. */
export default function globalSetup(): void {
  const started = Date.now();
  provisionHelm();
  process.stderr.write(`\n[unit set-up] helm ready after ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
}
