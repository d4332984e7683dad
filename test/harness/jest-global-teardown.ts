import * as fs from 'node:fs';
import type { ControlPlane } from '../../testing/control-plane';
import type { ConversionHarness } from './conversion-webhook';
import { leaveRunTempDir } from './run-temp-dir';

/** Stops the control plane; keeps its logs when a test failed (or OPKIT_KEEP_LOGS is set). */
export default async function globalTeardown(): Promise<void> {
  const conversion = (globalThis as Record<string, unknown>).__OPKIT_CONVERSION__ as ConversionHarness | undefined;
  await conversion?.close();
  for (const dir of [process.env.OPKIT_TEST_PACK_DIR, process.env.OPKIT_E2E_KUBECTL_DIR, process.env.OPKIT_E2E_RUN_DIR])
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  const cp = (globalThis as Record<string, unknown>).__OPKIT_CONTROL_PLANE__ as ControlPlane | undefined;
  const keepLogs = process.env.OPKIT_TESTS_FAILED === '1' || !!process.env.OPKIT_KEEP_LOGS;
  await cp?.stop({ keepLogs });
  leaveRunTempDir();
}
