/**
 * The one scan of this machine's processes that the harness, the tests and the bench share. A
 * process can end between listing /proc and reading its command line (the machine runs other
 * work, and the tests start and stop processes all the time), so one that is gone is left out,
 * never an error.
 */
import * as fs from 'node:fs';

/** A running process: its pid and its command line split into arguments. */
export interface RunningProcess {
  readonly pid: number;
  readonly args: readonly string[];
}

/** Every process whose command line could be read, its arguments split (an empty one for a kernel thread). */
export function runningProcesses(procRoot = '/proc'): RunningProcess[] {
  const found: RunningProcess[] = [];
  for (const entry of fs.readdirSync(procRoot)) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = readOrUndefined(`${procRoot}/${entry}/cmdline`);
    if (cmdline === undefined) continue;
    // Arguments end in NUL each, so the last split is empty.
    found.push({ pid: Number(entry), args: cmdline.replace(/\0$/, '').split('\0') });
  }
  return found;
}

/** The processes whose command line names `text` anywhere (e.g. a work directory). */
export function processesNaming(text: string, procRoot = '/proc'): RunningProcess[] {
  return runningProcesses(procRoot).filter((p) => p.args.some((arg) => arg.includes(text)));
}

/** A file's text, or undefined when it cannot be read (its process gone meanwhile). */
function readOrUndefined(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
