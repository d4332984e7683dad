/**
 * The e2e tier runs two files at a time on its one real node (jest.e2e.config.js). Files are
 * independent — each in namespaces of its own, the operators of `dist/` applied once by the tier's
 * set-up — but for what this module arbitrates:
 *
 * - a file that changes the node for every file after it (network-isolation stops kube-proxy) waits
 *   until every other file of the run has finished (`afterEveryOtherFile`);
 * - a file that takes something shared away for a while (olm-install scales `dist/`'s CronTab
 *   operator to zero) holds a lock of the run that a file needing it takes too (`takeRunLock`).
 *
 * Both wait on files the tier's reporter and the lock holders write in OPKIT_E2E_RUN_DIR.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The lock on `dist/`'s CronTab operator, which olm-install scales to zero while it runs. */
export const DIST_CRONTAB_OPERATOR = 'dist-crontab-operator';

/** How often a waiting file looks again. */
const POLL_MS = 500;

function runDir(): string | undefined {
  return process.env.OPKIT_E2E_RUN_DIR;
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, POLL_MS));
}

/** The paths of the run's files that have finished, as test/harness/finished-files-reporter.js records them. */
function finishedFiles(dir: string): Set<string> {
  const file = path.join(dir, 'finished');
  if (!fs.existsSync(file)) return new Set();
  // Whole lines only: the text after the last newline may be a line still being written.
  const lines = fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
  return new Set(lines.map((l) => JSON.parse(l) as string));
}

/** The run's other files (the sequencer names them all in OPKIT_E2E_FILES) that have not finished. */
export function unfinishedOtherFiles(self: string): string[] {
  const dir = runDir();
  if (!dir) return [];
  const files = JSON.parse(process.env.OPKIT_E2E_FILES ?? '[]') as string[];
  const finished = finishedFiles(dir);
  return files.filter((f) => f !== self && !finished.has(f));
}

/**
 * Resolves once every other file of the run has finished. Run outside the tier's set-up (no
 * OPKIT_E2E_RUN_DIR), or alone, it waits for nothing.
 */
export async function afterEveryOtherFile(self: string): Promise<void> {
  const waiting = unfinishedOtherFiles(self);
  if (waiting.length)
    process.stderr.write(
      `[e2e] ${path.basename(self)} waits for ${waiting.map((f) => path.basename(f)).join(', ')} to finish\n`,
    );
  await until(() => unfinishedOtherFiles(self).length === 0);
}

/**
 * Takes the run's lock `name` (a directory made atomically), waiting while another file holds it;
 * returns its release. Outside the tier's set-up there is no other file to wait for.
 */
export async function takeRunLock(name: string): Promise<() => void> {
  const dir = runDir();
  if (!dir) return () => undefined;
  const lock = path.join(dir, 'locks', name);
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const taken = (): boolean => {
    try {
      fs.mkdirSync(lock);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  };
  await until(taken);
  return () => {
    fs.rmSync(lock, { recursive: true, force: true });
  };
}
