/**
 * A control-plane process that exits while the harness waits on it: the failure names the logs,
 * so the logs must outlive the plane's stop (a conformance run's spare API server exited on a
 * restart, and the directory its error named had been removed by then).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { processExitedIn, waitFor } from '../../../testing/plane/process';

test('waitFor fails naming the process and its logs, and marks the logs as a dead process’s to keep', async () => {
  const logs = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-plane-logs-'));
  try {
    expect(processExitedIn(logs)).toBe(false);
    const dying = spawn(process.execPath, ['-e', 'process.exit(3)'], { stdio: 'ignore' });
    await new Promise((resolve) => dying.once('exit', resolve));
    await expect(waitFor('the server', () => false, [dying], 60_000, logs)).rejects.toThrow(
      new RegExp(`the server: a control-plane process exited \\(.*node.*, code 3\\); see logs in ${logs}`),
    );
    expect(processExitedIn(logs)).toBe(true);
    expect(fs.readFileSync(path.join(logs, 'EXITED'), 'utf8')).toMatch(/code 3/);
  } finally {
    fs.rmSync(logs, { recursive: true, force: true });
  }
});

test('a wait that ends well leaves no mark', async () => {
  const logs = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-plane-logs-'));
  try {
    await waitFor('nothing', () => true, [], 60_000, logs);
    expect(processExitedIn(logs)).toBe(false);
  } finally {
    fs.rmSync(logs, { recursive: true, force: true });
  }
});
