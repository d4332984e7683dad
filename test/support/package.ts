import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** `npm pack` of the kit (its prepack compiles it) into `destination`; the tarball's path. */
function npmPack(destination: string): string {
  const r = spawnSync('npm', ['pack', '--json', '--pack-destination', destination], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm pack failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  const packed = JSON.parse(r.stdout) as { filename: string }[];
  const file = packed[0]?.filename;
  if (!file) throw new Error(`npm pack named no tarball:\n${r.stdout}`);
  return path.join(destination, file);
}

/** How long a file waits for another's pack: packing takes well under a minute. */
const PACK_WAIT_MS = 600_000;

const sleep = (ms: number) => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

/** Makes the lock directory; false when another process made it first. */
function takeLock(dir: string): boolean {
  try {
    fs.mkdirSync(dir);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/**
 * The packed kit, made once per test run and shared by the files that install it (the scaffold
 * and the consumer path): packing compiles the whole library into lib/, which two files doing at
 * once would also race on. The first caller packs, under a lock directory; the others wait for its
 * result. Outside a suite run (no OPKIT_TEST_PACK_DIR) every call packs afresh.
 */
export function packKit(): string {
  const shared = process.env.OPKIT_TEST_PACK_DIR;
  if (!shared) return npmPack(fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-pack-')));
  const done = path.join(shared, 'tarball');
  const failed = path.join(shared, 'failed');
  if (!takeLock(path.join(shared, 'lock'))) {
    // Another file is packing: its tarball (or its failure) is the answer. The wait is bounded:
    // it blocks its worker, so jest's own timeouts cannot end it if that packer's worker died.
    const deadline = Date.now() + PACK_WAIT_MS;
    for (;;) {
      if (fs.existsSync(done)) return fs.readFileSync(done, 'utf8');
      if (fs.existsSync(failed))
        throw new Error(`packing the kit failed in another test file:\n${fs.readFileSync(failed, 'utf8')}`);
      if (Date.now() > deadline)
        throw new Error(`no packed kit in ${shared} after ${PACK_WAIT_MS / 1000} s: the test file packing it stopped`);
      sleep(500);
    }
  }
  try {
    const tarball = npmPack(shared);
    fs.writeFileSync(`${done}.tmp`, tarball);
    fs.renameSync(`${done}.tmp`, done);
    return tarball;
  } catch (err) {
    fs.writeFileSync(failed, err instanceof Error ? err.message : String(err));
    throw err;
  }
}
