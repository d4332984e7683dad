import type { ControlPlane } from '../../testing/control-plane';

/** Stops the control plane; keeps its logs when a test failed (or OPKIT_KEEP_LOGS is set). */
export default async function globalTeardown(): Promise<void> {
  const cp = (globalThis as Record<string, unknown>).__OPKIT_CONTROL_PLANE__ as ControlPlane | undefined;
  if (!cp) return;
  const keepLogs = process.env.OPKIT_TESTS_FAILED === '1' || !!process.env.OPKIT_KEEP_LOGS;
  await cp.stop({ keepLogs });
}
