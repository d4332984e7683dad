/**
 * A real-node run killed as a crashed test run dies: `cluster --real-node` started in a process
 * of its own, a pod running on its node, then SIGKILL — nothing of its own cleanup runs. What it
 * leaves (its plane's and node's processes, the pod's, its work directory) is recorded for
 * test/e2e/killed-run.test.ts, which checks the next start took all of it back.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pidsNaming } from '../../testing/node/leftovers';
import { commandArgs } from '../support/command';

export interface KilledRun {
  readonly workDir: string;
  /** Every process that named the work directory, and every pod process, when it was killed. */
  readonly pids: readonly number[];
}

const ROOT = path.resolve(__dirname, '..', '..');

/** The processes in the pods' cgroups (cgroup v1's cpu hierarchy, or the unified one). */
function podProcesses(): number[] {
  const roots = ['/sys/fs/cgroup/cpu/kubepods', '/sys/fs/cgroup/kubepods'].filter((d) => fs.existsSync(d));
  const walk = (dir: string): number[] => [
    ...fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number),
    ...fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .flatMap((e) => walk(path.join(dir, e.name))),
  ];
  return roots.flatMap(walk);
}

/** Starts a real-node cluster in a child process, runs a pod on it, and kills the process outright. */
export async function killARealNodeRun(): Promise<KilledRun> {
  const child = spawn(process.execPath, [...commandArgs(), 'cluster', '--real-node'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const kubeconfig = await new Promise<string>((resolve, reject) => {
    child.on('exit', (code) => {
      reject(new Error(`cluster --real-node exited (${String(code)}) before it was ready:\n${out}`));
    });
    const check = setInterval(() => {
      const found = /export KUBECONFIG=(\S+)/.exec(out);
      if (found?.[1]) {
        clearInterval(check);
        resolve(found[1]);
      }
    }, 200);
  });
  const kubectl = (args: string[]) =>
    execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8' });
  try {
    kubectl(['run', 'left-behind', '--image=opkit.local/pause:1', '--image-pull-policy=Never', '--restart=Never']);
    kubectl(['wait', '--for=condition=Ready', '--timeout=60s', 'pod/left-behind']);
  } catch (err) {
    // Killed anyway, so that the node is a dead run's, which the next start takes back, and not
    // held by a live process that nothing stops (it once held the machine's one real node).
    child.removeAllListeners('exit');
    child.kill('SIGKILL');
    throw err;
  }
  const workDir = path.dirname(kubeconfig);
  const pids = [...new Set([...pidsNaming(workDir), ...podProcesses()])].filter((p) => p !== child.pid);
  child.removeAllListeners('exit');
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  return { workDir, pids };
}
