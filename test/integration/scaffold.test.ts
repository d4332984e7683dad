/**
 * From nothing to a reconciled resource of one's own kind, as a new user takes it, with the
 * packed kit and no file edited by hand: `init` in an empty directory, `npm install`, the
 * generated tests (unit, and integration against the suite's API server), `create kind`, the
 * tests again, `npm run synth`; then the README's quickstart: `npm run cluster` (a control plane
 * of the package's own), the CRDs applied, `npm run operator`, the samples applied and
 * reconciled, and one Ctrl-C stopping the reconciler gracefully.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { kubectl, kubectlOk, testKubeconfig } from '../support/kube';
import { packKit } from '../support/package';

jest.setTimeout(900_000);

let work: string;
let tarball: string;
let project: string;

const quiet = { npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): string {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: 600_000,
    env: { ...process.env, ...quiet, ...env },
  });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}) in ${cwd}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout + r.stderr;
}

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-scaffold-'));
  tarball = packKit();
  project = path.join(work, 'website-operator');
  fs.mkdirSync(project);
});

afterAll(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

test('init makes a project offline whose tests pass, against a real API server, without an edit (its conformance file once, after create kind)', () => {
  const said = run(
    'npm',
    [
      'exec',
      '--yes',
      '--prefer-offline',
      `--package=${tarball}`,
      '--',
      'cdk8s-operator-kit',
      'init',
      '--kit',
      `file:${tarball}`,
    ],
    project,
  );
  expect(said).toContain('wrote kinds/website.ts');
  expect(fs.readdirSync(project).sort()).toEqual(
    expect.arrayContaining([
      'README.md',
      'app.ts',
      'controllers.ts',
      'kinds',
      'main.ts',
      'package.json',
      'reconciler.ts',
      'test',
    ]),
  );
  run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], project);
  run('npx', ['tsc', '-p', '.'], project);
  // All but the conformance file, which starts a control plane of its own and puts every kind
  // through every check: the next test runs it, over both kinds.
  const tested = run(
    'npm',
    ['test', '--', '--testPathIgnorePatterns', '/node_modules/', '/test/e2e/', 'conformance'],
    project,
    { OPKIT_KUBECONFIG: testKubeconfig() },
  );
  expect(tested).toMatch(/Tests:\s+6 passed, 6 total/);
});

test('create kind adds a second kind, wired into the operator, with tests that pass', () => {
  const bin = path.join(project, 'node_modules', '.bin', 'cdk8s-operator-kit');
  run(bin, ['create', 'kind', 'Cache', '--group', 'cache.scaffold.example.com', '--version', 'v1beta1'], project);
  expect(fs.readFileSync(path.join(project, 'controllers.ts'), 'utf8')).toContain('cacheController,');
  // A kind that is there already, or a bad name, is refused in one line, and nothing is written.
  const again = spawnSync(bin, ['create', 'kind', 'Cache', '--group', 'cache.scaffold.example.com'], {
    cwd: project,
    encoding: 'utf8',
  });
  expect({ code: again.status, stderr: again.stderr.trim() }).toEqual({
    code: 1,
    stderr: 'cdk8s-operator-kit: controllers.ts already has the kind Cache',
  });
  const bad = spawnSync(bin, ['create', 'kind', 'lower', '--group', 'x.example.com'], {
    cwd: project,
    encoding: 'utf8',
  });
  expect(bad.stderr).toContain('UpperCamelCase');
  run('npx', ['tsc', '-p', '.'], project);
  expect(run('npm', ['test'], project, { OPKIT_KUBECONFIG: testKubeconfig() })).toMatch(/Tests:\s+13 passed, 13 total/);
  run('npm', ['run', 'synth'], project);
  const cluster = fs.readFileSync(path.join(project, 'dist', '0000-cluster.k8s.yaml'), 'utf8');
  expect(cluster).toContain('name: websites.website.example.com');
  expect(cluster).toContain('name: caches.cache.scaffold.example.com');
});

/** A command started as a terminal starts one: in a process group of its own, output to a file. */
function startInGroup(cmd: string, args: string[], cwd: string, log: string, env: NodeJS.ProcessEnv): ChildProcess {
  const out = fs.openSync(log, 'w');
  // Output to a file, not a pipe: a pipe nobody reads fills up and stops the writer.
  const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', out, out], detached: true });
  fs.closeSync(out);
  return child;
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

function readIfThere(file: string): string {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '(nothing)';
}

/** Signals a command's whole process group, if it is still running. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    });
  });
}

test("the README's quickstart: npm run cluster, the CRDs, npm run operator, the samples reconciled, one Ctrl-C", async () => {
  // The user's shell: no kubeconfig of the suite's, nothing but what `cluster` prints.
  const suiteOnly = new Set(['OPKIT_KUBECONFIG', 'OPKIT_TEST_KUBECONFIG', 'KUBECONFIG']);
  const env: NodeJS.ProcessEnv = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !suiteOnly.has(name))),
    ...quiet,
  };
  const clusterLog = path.join(work, 'cluster.log');
  const operatorLog = path.join(work, 'operator.log');
  const cluster = startInGroup('npm', ['run', 'cluster'], project, clusterLog, env);
  let operator: ChildProcess | undefined;
  let kubeconfig: string | undefined;
  try {
    kubeconfig = await waitFor('the export KUBECONFIG= line of npm run cluster', 300_000, () => {
      if (cluster.exitCode !== null) throw new Error(`npm run cluster exited:\n${fs.readFileSync(clusterLog, 'utf8')}`);
      return /^export KUBECONFIG=(\S+)$/m.exec(fs.readFileSync(clusterLog, 'utf8'))?.[1];
    });
    expect(kubeconfig).not.toBe(testKubeconfig());
    const k = { kubeconfig };
    kubectlOk(['apply', '--server-side', '-f', path.join(project, 'dist', '0000-cluster.k8s.yaml')], k);
    kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all'], k);

    operator = startInGroup('npm', ['run', 'operator'], project, operatorLog, { ...env, KUBECONFIG: kubeconfig });
    kubectlOk(['apply', '-f', path.join(project, 'dist', '0002-samples.k8s.yaml')], k);
    const website = JSON.parse(kubectlOk(['get', 'website', 'website-sample', '-n', 'default', '-o', 'json'], k)) as {
      metadata: { uid: string };
    };
    const deployment = await waitFor("the sample Website's Deployment, ready", 180_000, () => {
      const got = kubectl(['get', 'deployment', 'website-sample', '-n', 'default', '-o', 'json'], k);
      if (got.code !== 0) return undefined;
      const d = JSON.parse(got.stdout) as {
        metadata: { ownerReferences?: { kind: string; uid: string; controller?: boolean }[] };
        spec: { replicas: number };
        status?: { readyReplicas?: number };
      };
      return d.status?.readyReplicas === d.spec.replicas ? d : undefined;
    });
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Website', uid: website.metadata.uid, controller: true }),
    ]);
    const cache = await waitFor('the sample Cache reconciled', 60_000, () => {
      const got = kubectl(['get', 'deployment', 'cache-sample', '-n', 'default', '-o', 'name'], k);
      return got.code === 0 ? got.stdout.trim() : undefined;
    });
    expect(cache).toBe('deployment.apps/cache-sample');

    // Ctrl-C in the terminal: SIGINT to the foreground process group (npm, the shell, `run`).
    // The reconciler gets it once and stops gracefully with 0; npm then ends itself by the
    // signal, as npm does on Ctrl-C.
    signalGroup(operator, 'SIGINT');
    expect(await exited(operator)).toEqual({ code: null, signal: 'SIGINT' });
    const said = fs.readFileSync(operatorLog, 'utf8');
    expect(said.match(/signal received: shutting down gracefully/g)).toHaveLength(1);
    expect(said).not.toContain('second signal');
    expect(said).toMatch(/"exitCode":0,"msg":"manager stopped"/);
  } catch (err) {
    // What the two commands said is the first thing to read when a step fails.
    const said = [clusterLog, operatorLog].map((f) => `--- ${path.basename(f)}:\n${readIfThere(f)}`).join('\n');
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${said}`, { cause: err });
  } finally {
    if (operator) signalGroup(operator, 'SIGKILL');
    signalGroup(cluster, 'SIGINT');
  }
  // Ctrl-C stops the cluster too: its processes stopped and its directory (kubeconfig, etcd data)
  // removed, which the control plane does only once all of them have exited.
  expect(await exited(cluster)).toEqual({ code: null, signal: 'SIGINT' });
  expect(kubeconfig).toMatch(/kubeconfig$/);
  expect(fs.existsSync(path.dirname(kubeconfig ?? '.'))).toBe(false);
});
