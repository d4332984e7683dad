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

const sleep = (ms: number) => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

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
  try {
    fs.mkdirSync(path.join(shared, 'lock'));
  } catch {
    // Another file is packing: its tarball (or its failure) is the answer.
    for (;;) {
      if (fs.existsSync(done)) return fs.readFileSync(done, 'utf8');
      if (fs.existsSync(failed))
        throw new Error(`packing the kit failed in another test file:\n${fs.readFileSync(failed, 'utf8')}`);
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
