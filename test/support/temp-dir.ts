/**
 * Temp folders a test file makes, removed after the file's tests: import this module at the top of
 * the test file (its `afterAll` registers there), then call `tempDir` wherever a folder is needed.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const made: string[] = [];

/** A new folder `<prefix>XXXXXX` under the system's temp directory. */
export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
