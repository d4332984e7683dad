import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { processesNaming, runningProcesses } from '../../../testing/processes';

/** A /proc of our own: pid directories with command lines, and one whose process has gone. */
function fakeProc(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-proc-'));
  const proc = (pid: string, cmdline?: string) => {
    fs.mkdirSync(path.join(root, pid));
    if (cmdline !== undefined) fs.writeFileSync(path.join(root, pid, 'cmdline'), cmdline);
  };
  proc('10', '/opt/bin/kube-proxy\0--config=/run/node-1/proxy.yaml\0');
  proc('11', '/usr/bin/sleep\x00100\x00');
  // Listed, then ended before its command line was read: the scan that failed one e2e run.
  proc('12');
  proc('13', '');
  fs.mkdirSync(path.join(root, 'self'));
  return root;
}

test('a process that ends mid-scan is left out, not an error; arguments are split without the trailing NUL', () => {
  const root = fakeProc();
  try {
    expect(runningProcesses(root).sort((a, b) => a.pid - b.pid)).toEqual([
      { pid: 10, args: ['/opt/bin/kube-proxy', '--config=/run/node-1/proxy.yaml'] },
      { pid: 11, args: ['/usr/bin/sleep', '100'] },
      { pid: 13, args: [''] },
    ]);
    expect(processesNaming('/run/node-1', root).map((p) => p.pid)).toEqual([10]);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('on the real /proc, this test process is found by its command line', () => {
  const me = runningProcesses().find((p) => p.pid === process.pid);
  expect(me?.args).toContain(process.argv[1]);
  expect(processesNaming(process.argv[1]!).map((p) => p.pid)).toContain(process.pid);
});
