import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { inputsDigest } from './generated-output';

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

/** What `npm pack` reads: the compiled folders' sources, the files it ships as they are, and how it compiles them. */
const PACK_INPUTS = [
  'constructs',
  'operator',
  'command',
  'testing',
  'imports',
  'docs',
  'CHANGELOG.md',
  'README.md',
  'LICENSE',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/copy-assets.mjs',
  'node_modules/typescript/package.json',
];

/** Where packs are kept between runs, as tsc keeps its build info: under node_modules/.cache. */
const PACK_CACHE = path.join(ROOT, 'node_modules', '.cache', 'opkit-pack');

/** How many packs the cache keeps: the newest few, so switching branches back and forth still hits. */
const PACKS_KEPT = 3;

/**
 * The kit packed from the sources as they are now: taken from the cache when nothing that goes
 * into the package changed since it was packed (packing compiles the whole library, the largest
 * part of a warm run's set-up for the files that install it), packed and kept there otherwise.
 */
function cachedPack(): string {
  const inputs = PACK_INPUTS.map((p) => path.join(ROOT, p)).filter((p) => fs.existsSync(p));
  const dir = path.join(PACK_CACHE, inputsDigest(inputs));
  const named = path.join(dir, 'tarball');
  if (fs.existsSync(named)) {
    const tarball = path.join(dir, fs.readFileSync(named, 'utf8'));
    if (fs.existsSync(tarball)) {
      const now = new Date();
      fs.utimesSync(dir, now, now); // used: the newest, as far as pruning goes
      return tarball;
    }
  }
  fs.mkdirSync(PACK_CACHE, { recursive: true });
  const building = fs.mkdtempSync(path.join(PACK_CACHE, 'packing-'));
  try {
    const tarball = npmPack(building);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.writeFileSync(path.join(building, 'tarball'), path.basename(tarball));
    fs.renameSync(building, dir);
    pruneCache();
    return path.join(dir, path.basename(tarball));
  } finally {
    fs.rmSync(building, { recursive: true, force: true });
  }
}

/** Removes all but the newest packs. */
function pruneCache(): void {
  const packs = fs
    .readdirSync(PACK_CACHE)
    .map((name) => ({ name, mtimeMs: fs.statSync(path.join(PACK_CACHE, name)).mtimeMs }))
    .sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const old of packs.slice(PACKS_KEPT))
    fs.rmSync(path.join(PACK_CACHE, old.name), { recursive: true, force: true });
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
 * result, which comes from the pack cache when the sources have not changed since an earlier
 * run. Outside a suite run (no OPKIT_TEST_PACK_DIR) the cache alone answers.
 */
export function packKit(): string {
  const shared = process.env.OPKIT_TEST_PACK_DIR;
  if (!shared) return cachedPack();
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
    const tarball = cachedPack();
    fs.writeFileSync(`${done}.tmp`, tarball);
    fs.renameSync(`${done}.tmp`, done);
    return tarball;
  } catch (err) {
    fs.writeFileSync(failed, err instanceof Error ? err.message : String(err));
    throw err;
  }
}
