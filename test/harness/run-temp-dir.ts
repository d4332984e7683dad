import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * One directory for every temporary file of a test run (the tests', the control plane's, the
 * reconcilers' and the tools'): the global set-ups point TMPDIR at it, so `os.tmpdir()` in the
 * workers and in every child process lands there, and the last global teardown removes it. A run
 * with a failed test keeps it, since the control plane's logs and the files a test wrote are what
 * explain the failure.
 *
 * Each tier's set-up enters it and its teardown leaves it; both run in jest's main process, so a
 * count in the environment tells the last one out.
 */
export function enterRunTempDir(): string {
  let dir = process.env.OPKIT_RUN_TMPDIR;
  if (!dir) {
    const outer = os.tmpdir();
    dir = fs.mkdtempSync(path.join(outer, 'opkit-run-'));
    keepToolCaches(outer, dir);
    process.env.OPKIT_RUN_TMPDIR = dir;
    process.env.TMPDIR = dir;
    keepKubectlCacheIn(dir);
  }
  process.env.OPKIT_RUN_TMPDIR_USERS = String(users() + 1);
  return dir;
}

/**
 * kubectl keeps discovery and OpenAPI documents by server address under ~/.kube/cache. Every
 * control plane a run starts listens on a port of its own, so each run left some 35 MB there that
 * nothing read again (2.9 GB on this machine after a day of runs); the run's kubectl calls keep
 * them in `dir` instead, removed with it. A cache the user chose is theirs.
 */
export function keepKubectlCacheIn(dir: string): void {
  process.env.KUBECACHEDIR ??= path.join(dir, 'kubectl-cache');
}

/** Removes the run's directory once the last tier has left it, unless a test failed. */
export function leaveRunTempDir(): void {
  const dir = process.env.OPKIT_RUN_TMPDIR;
  if (!dir) return;
  const left = Math.max(0, users() - 1);
  process.env.OPKIT_RUN_TMPDIR_USERS = String(left);
  if (left > 0) return;
  if (process.env.OPKIT_TESTS_FAILED === '1' || process.env.OPKIT_KEEP_LOGS) {
    process.stderr.write(`[test run] temporary files kept in ${dir}\n`);
    return;
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * Compile caches that tools keep under `$TMPDIR`: tsx's (`tsx-<uid>`) and jest's (`jest_<uid in
 * base 36>`, which the generated projects' own test runs use). The run's are links to the lasting
 * ones, so the reconcilers a run starts and the scaffold's and consumer's projects do not compile
 * the same sources afresh in every run; both key their entries by the source's content.
 */
function keepToolCaches(outer: string, dir: string): void {
  const uid = process.getuid?.() ?? 0;
  for (const name of [`tsx-${uid}`, `jest_${uid.toString(36)}`]) {
    fs.mkdirSync(path.join(outer, name), { recursive: true, mode: 0o700 });
    fs.symlinkSync(path.join(outer, name), path.join(dir, name));
  }
}

function users(): number {
  return Number(process.env.OPKIT_RUN_TMPDIR_USERS ?? '0') || 0;
}
